/* lzf.h: LZF compression, the format RDB uses for long strings.
 *
 * Written here from the public description of the format (no liblzf
 * dependency).  A stream is a series of runs: a control byte below 32 is a
 * literal run of ctrl+1 bytes that follow; otherwise the top 3 bits are a
 * back-reference length (7 = "add the next byte"), plus 2, and the low 5
 * bits with the next byte form the distance-1 (up to 8191) back into the
 * output.  Pure module: rdb_save.c and rdb_load.c call it. */
#ifndef RL_LZF_H
#define RL_LZF_H

#include <stddef.h>

/* Compress in[0..in_len) into out (out_len bytes).  Returns the compressed
 * size, or 0 when it would not fit (the caller then stores the raw bytes). */
size_t lzf_compress(const void *in, size_t in_len, void *out, size_t out_len);
/* Decompress into out; returns the output size, or 0 on corrupt input or an
 * output larger than out_len. */
size_t lzf_decompress(const void *in, size_t in_len, void *out, size_t out_len);

#endif
