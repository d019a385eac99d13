"""skbmodel: a calibrated, vectorised cost model of the Linux kernel's SKB memory lifecycle.

Subsystem modules: :mod:`slub`, :mod:`zeroing`, :mod:`page_pool`, :mod:`kfree_skb_list`, :mod:`veth`,
:mod:`cpumap`, :mod:`napi_cache`, :mod:`budget`, :mod:`noise`; composition in :mod:`model`;
CPU profiles in :mod:`profile`; the share-link codec in :mod:`state`.
"""
__version__ = "0.1.0"
