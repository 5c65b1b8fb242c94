/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An empty shared object: the P1 baseline.  Preloading it costs what any
 * preload costs (open, map, relocate one more object) and nothing else, so
 * "ours / empty" isolates what libpam_wrapper.so adds to a process.
 */
int pwrap_bench_empty_marker;
