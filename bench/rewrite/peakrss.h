/*
 * peakrss.h: the peak resident set of this process, for the rewrite
 * benchmark's memory figures (rw-body) and the 1 GiB test
 * (tests/rewrite/test_rw_rss.c).
 */
#ifndef PEAKRSS_H
#define PEAKRSS_H

/* The peak resident set of this process image in KiB: VmHWM of
 * /proc/self/status. Not getrusage's ru_maxrss, which Linux carries over
 * exec from the process that forked us (a Python parent's 30 MB would
 * hide anything below it); getrusage only where /proc is missing. */
long peak_rss_kib(void);

#endif
