/*
 * store.h: the state store behind the rules' count(), score() and mark()
 * (docs/state.md): the built-in store (fixed memory, one lock per bucket
 * of eight entries, keyed hashing, value-ranked eviction) and a host's
 * own store behind clf_store_ops, one dispatch for both.
 *
 * Every call here is thread-safe and allocates nothing. A status other
 * than CLF_OK means "no answer" (full, busy, the host's store failed):
 * the interpreter then uses the defined result of docs/state.md.
 */
#ifndef VM_STORE_H
#define VM_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "classify.h"
#include "visibility.h"

/* Key types of an entry (the TYPE of its key text, classify.h). */
enum { VM_KEY_IP = 1, VM_KEY_INT = 2, VM_KEY_STR = 3 };

/* The compile-time bounds classifyc checks (docs/language.md, "State"). */
#define VM_STATE_NAME_MAX 32
#define VM_STATE_WINDOW_MAX 86400u          /* a day */
#define VM_STATE_HALF_LIFE_MAX 2592000u     /* 30 days */
#define VM_STATE_TTL_MAX 2592000u           /* 30 days */
#define VM_STATE_AMOUNT_MAX 1000000
/* str keys longer than this are keyed by their XXH3-128 (TYPE "strh"). */
#define VM_STATE_STR_KEY_MAX 64

/* Writes the key text of an entry into buf (CLF_STATE_KEY_MAX bytes):
 * kind a clf_state_kind, keytype a VM_KEY_*, the value as the register
 * holds it (an ip: 16 bytes; an int: *i; a str: p/n). Returns its length,
 * or 0 when the value cannot key an entry (an invalid address). */
VM_INTERNAL size_t vm_state_key(char *buf, int kind, uint32_t param, const char *name,
                                size_t namelen, int keytype, const char *p, size_t n,
                                int64_t i);

/* The operations, on either kind of store. */
VM_INTERNAL clf_status vm_store_count(clf_store *s, const char *key, size_t keylen,
                                      uint32_t window_s, uint32_t n, int64_t now_ms,
                                      int64_t *out);
VM_INTERNAL clf_status vm_store_score(clf_store *s, const char *key, size_t keylen,
                                      uint32_t half_life_s, int64_t add, int64_t now_ms,
                                      double *out);
VM_INTERNAL clf_status vm_store_mark(clf_store *s, const char *key, size_t keylen,
                                     uint32_t ttl_s, int set, int64_t now_ms, int *out);

/* The built-in store's parts (store.c); classify.h documents each. */
VM_INTERNAL clf_status vm_store_format(void *mem, uint64_t bytes, const uint8_t seed[16],
                                       char *err, size_t errlen);
VM_INTERNAL clf_status vm_store_attach(void *mem, uint64_t bytes, int owns, clf_store **out,
                                       char *err, size_t errlen);
VM_INTERNAL clf_status vm_store_wrap(const clf_store_ops *ops, void *self, clf_store **out);
VM_INTERNAL void vm_store_free(clf_store *s);
VM_INTERNAL int vm_store_builtin(const clf_store *s);
VM_INTERNAL void vm_store_stats(const clf_store *s, clf_store_stats *out);
VM_INTERNAL clf_status vm_store_collect(clf_store *s, uint32_t *cursor, uint32_t max_buckets,
                                        clf_state_delta_fn fn, void *ud);
VM_INTERNAL clf_status vm_store_merge(clf_store *s, const clf_state_remote *r);
VM_INTERNAL clf_status vm_store_peek(clf_store *s, const char *key, size_t keylen,
                                     int64_t now_ms, int64_t *out);
VM_INTERNAL clf_status vm_store_poke(clf_store *s, const char *key, size_t keylen,
                                     int64_t now_ms, int64_t value);

/* Parses the KIND and PARAM of a key; 1 on success. */
VM_INTERNAL int vm_state_key_parse(const char *key, size_t keylen, int *kind, uint32_t *param);

#endif
