"""skbmodel: a calibrated, vectorised cost model of the Linux kernel's SKB memory lifecycle.

Subsystem modules (the physics): :mod:`slub`, :mod:`zeroing`, :mod:`page_pool`, :mod:`page_alloc`,
:mod:`kfree_skb_list`, :mod:`veth`, :mod:`cpumap`, :mod:`napi_cache`, :mod:`budget`, :mod:`noise`; the
paths put together stage by stage in :mod:`design`; every output evaluated in :mod:`model`; the inputs
in :mod:`params`, the outputs and components in :mod:`schema`; one side of a state (A or B) with its
profile in :mod:`scenario`; CPU profiles in :mod:`profile`; the share-link codec in :mod:`state`.
"""
#: The model version, recorded in every share link as ``mv`` (see :mod:`skbmodel.links.versions`).
#: Bump the MINOR version whenever a model formula, a mechanism or an output's definition changes
#: (anything that can move a number for the same profile values), then record the golden links'
#: new numbers with a reason: ``python scripts/golden_links.py --record --reason "..."``.
#: Bump the PATCH version for changes that cannot move a number.  A recalibration is not a model
#: change: the profile gets a new version (hash of its values) by itself; run
#: ``python scripts/archive_profiles.py`` BEFORE it so old links keep opening with their numbers.
__version__ = "0.7.0"
