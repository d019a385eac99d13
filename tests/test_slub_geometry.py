"""Object size physics of SLUB: slab order and objects per slab as calculate_order() gives them,
the kmalloc buckets and the hand-over to the page allocator above kmalloc-8k."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skbmodel.physics import slub

# /proc/slabinfo of x86-64 kernels since v6.8 on a 12-thread machine: (objsize, objperslab, pagesperslab)
SLABINFO = [(8, 512, 1), (16, 256, 1), (32, 128, 1), (64, 64, 1), (96, 42, 1), (128, 32, 1), (192, 21, 1),
            (256, 32, 2), (512, 32, 4), (1024, 32, 8), (2048, 16, 8), (4096, 8, 8), (8192, 4, 8)]


def test_kmalloc_caches_get_the_orders_and_object_counts_of_slabinfo():
    size = np.array([s for s, _, _ in SLABINFO], dtype=float)
    order, slab, objs, _ = slub.slab_geometry(size, nr_cpus=12)
    assert objs.tolist() == [o for _, o, _ in SLABINFO]
    assert (slab / slub.PAGE_BYTES).tolist() == [p for _, _, p in SLABINFO]


def test_skbuff_head_cache_is_the_seed_geometry():
    """256 B objects: an order-1 slab of 32 objects (seed 000 rows kfl-c2, kfl-c3)."""
    order, slab, objs, waste = slub.slab_geometry(256.0)
    assert (float(order), float(slab), float(objs), float(waste)) == (1.0, 8192.0, 32.0, 0.0)


def test_fewer_cpus_allow_smaller_slabs():
    # one CPU: min_objects = 4 * (fls(1) + 1) = 8, so 512 B objects fit an order-0 slab of 8
    assert float(slub.calculate_order(512, nr_cpus=1)) == 0.0
    assert float(slub.calculate_order(512, nr_cpus=12)) == 2.0


def test_objects_larger_than_the_max_order_slab_take_their_own_order():
    assert float(slub.calculate_order(65536)) == 4.0
    assert float(slub.order_objects(4, 65536)) == 1.0


@pytest.mark.parametrize("request_bytes,taken", [(1, 8), (8, 8), (9, 16), (100, 128), (129, 192), (200, 256),
                                                 (257, 512), (4097, 8192), (8192, 8192), (8193, 16384),
                                                 (20000, 32768)])
def test_kmalloc_takes_the_bucket_or_whole_pages(request_bytes, taken):
    assert float(slub.kmalloc_bytes(request_bytes)) == taken
    assert bool(slub.is_page_allocator(request_bytes)) == (request_bytes > 8192)


def test_large_kmalloc_costs_the_published_order_0_and_order_3_pairs():
    kw = dict(page_single_cycles=199.0, compound_page_cycles=45.0)
    assert float(slub.large_kmalloc_pair_cycles(4096, **kw)) == 199.0
    assert float(slub.large_kmalloc_pair_cycles(32768, **kw)) == 514.0


@settings(max_examples=200, deadline=None)
@given(st.integers(8, 1 << 16), st.integers(1, 512))
def test_the_chosen_slab_holds_an_object_and_wastes_at_most_half(size, cpus):
    order, slab, objs, waste = slub.slab_geometry(float(size), nr_cpus=cpus)
    assert objs >= 1 and 0 <= order <= slub.MAX_PAGE_ORDER
    assert waste <= 0.5 + 1e-12


def test_the_model_s_lookup_is_calculate_order():
    """Every whole size up to kmalloc-8k (the lookup) and fractional sizes (the search) get the kernel's slab;
    above 8 KiB one page block per object."""
    sizes = np.concatenate([np.arange(1.0, 8193.0), [300.5, 8192.5, 9000.0, 65536.0]])
    slab, objs = slub.scenario_geometry(sizes, 256.0, 8192.0)
    order = slub.calculate_order(sizes)
    small = sizes <= 8192
    np.testing.assert_array_equal(slab[small], slub.PAGE_BYTES * np.exp2(order[small]))
    np.testing.assert_array_equal(slab[~small], slub.PAGE_BYTES * np.exp2(slub.get_order(sizes[~small])))
    assert np.all(objs[~small] == 1) and objs[255] == 32
