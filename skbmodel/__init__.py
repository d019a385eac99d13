"""skbmodel: a calibrated, vectorised cost model of the Linux kernel's SKB memory lifecycle.

The kernel's subsystems (the physics) in :mod:`skbmodel.physics` (``slub``, ``zeroing``, ``page_pool``,
``page_alloc``, ``kfree_skb_list``, ``veth``, ``cpumap``, ``napi_cache``, ``budget``, ``noise``, ...); every
path put together stage by stage in :mod:`skbmodel.composer`; every output evaluated in :mod:`skbmodel.model`;
the inputs in :mod:`skbmodel.params`, the outputs and components in :mod:`skbmodel.schema`; one side of a
state (A or B) with its profile in :mod:`skbmodel.scenario`, a state's question in :mod:`skbmodel.question`
and its answers in :mod:`skbmodel.answers`; CPU profiles in :mod:`skbmodel.machine.profile`; the share-link
codec in :mod:`skbmodel.links.state`; measurements, fits and validation in :mod:`skbmodel.evidence`.
"""
#: The model version, recorded in every share link as ``mv`` (see :mod:`skbmodel.links.versions`).
#: Bump the MINOR version whenever a model formula, a mechanism or an output's definition changes
#: (anything that can move a number for the same profile values), then record the golden links'
#: new numbers with a reason: ``python scripts/golden_links.py --record --reason "..."``.
#: Bump the PATCH version for changes that cannot move a number.  A recalibration is not a model
#: change: the profile gets a new version (hash of its values) by itself; run
#: ``python scripts/archive_profiles.py`` BEFORE it so old links keep opening with their numbers.
__version__ = "0.7.0"
