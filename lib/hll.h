/* hll.h: the HyperLogLog value format of Redis 7 (a string starting with
 * "HYLL") and the cardinality estimator, as a library over sds.
 *
 * Layout: a 16-byte header, then the registers.
 *   0..3  "HYLL"
 *   4     encoding: 0 dense, 1 sparse
 *   5..7  unused (zero)
 *   8..15 cached cardinality, little endian; bit 7 of byte 15 set means
 *         the cache is stale
 * Dense: 16384 registers of 6 bits packed little-endian-first (register i
 * starts at bit 6*i of the register area; bit 0 is the low bit of byte 0),
 * 12288 bytes.  Sparse: a run-length code over the 16384 registers:
 *   00llllll           ZERO  run of l+1 (1..64) zero registers
 *   01llllll llllllll  XZERO run of l+1 (1..16384) zero registers
 *   1vvvvvll           VAL   run of l+1 (1..4) registers equal to v+1 (1..32)
 * A sparse value must cover exactly 16384 registers; anything else is
 * corrupt.  Elements are hashed with MurmurHash64A (seed 0xadc83b19): the
 * low 14 bits pick the register, the position of the lowest set bit of
 * the remaining 50 bits (1-based, at most 51) is the register's candidate.
 *
 * Callers: src/hyperloglog.c (the commands), the unit test.  Nothing here
 * knows about clients or keys; functions that may reallocate take sds *. */
#ifndef RL_HLL_H
#define RL_HLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sds.h"

#define HLL_P 14
#define HLL_REGISTERS (1 << HLL_P) /* 16384 */
#define HLL_BITS 6
#define HLL_REGISTER_MAX 63
#define HLL_HDR_SIZE 16
#define HLL_DENSE_SIZE (HLL_HDR_SIZE + (HLL_REGISTERS * HLL_BITS + 7) / 8)
#define HLL_DENSE 0
#define HLL_SPARSE 1
#define HLL_SPARSE_VAL_MAX 32 /* largest value a VAL opcode holds */

uint64_t hll_murmur64a(const void *key, size_t len, uint64_t seed);
/* Register index of an element and its candidate value (1..51). */
int hll_pattern(const unsigned char *ele, size_t len, long *index);

/* A new empty HLL: sparse, one XZERO over every register, cache valid 0. */
sds hll_new(void);
/* Whether p/len has a valid header: magic, a known encoding, the exact
 * dense length.  The sparse body is checked by the functions that walk it. */
bool hll_header_ok(const unsigned char *p, size_t len);
static inline int hll_encoding(const unsigned char *p) { return p[4]; }

/* Add an element: 1 when a register grew, 0 when not, -1 when the sparse
 * body is corrupt.  A sparse value that would pass sparse_max bytes, or
 * needs a value above 32, becomes dense.  May reallocate *s. */
int hll_add(sds *s, const unsigned char *ele, size_t len, size_t sparse_max);
/* Raise register idx to at least count; same returns as hll_add. */
int hll_raise(sds *s, long idx, uint8_t count, size_t sparse_max);
/* Convert to dense in place (no-op if dense); false if corrupt. */
bool hll_to_dense(sds *s);
/* max[i] = MAX(max[i], register i) over one HLL; false if corrupt. */
bool hll_merge_max(uint8_t *max, const unsigned char *p, size_t len);

/* Cardinality estimate of a value (*invalid set on a corrupt sparse body)
 * or of 16384 one-byte registers. */
uint64_t hll_count(const unsigned char *p, size_t len, bool *invalid);
uint64_t hll_count_registers(const uint8_t *regs);

/* The cached cardinality in the header. */
bool hll_cache_valid(const unsigned char *p);
uint64_t hll_cache_get(const unsigned char *p);
void hll_cache_set(unsigned char *p, uint64_t card);
void hll_cache_invalidate(unsigned char *p);

/* Dense register access on the register area (after the header). */
uint8_t hll_dense_get(const unsigned char *regs, long idx);
void hll_dense_put(unsigned char *regs, long idx, uint8_t val);

/* The sparse body as PFDEBUG DECODE prints it ("z:3 Z:100 v:2,1 ..."),
 * caller frees. */
sds hll_sparse_decode(const unsigned char *p, size_t len);

#endif
