/*
 * classify.h: the public API of libclassify.
 *
 * libclassify loads a compiled rules file (`rules.bin`, written by
 * `classifyc`) and classifies HTTP requests with it. Every classification
 * ends in a verdict, CLF_ACCEPT (let the request through) or CLF_REJECT
 * (block it), and an optional reason string. What a verdict means on the
 * wire is the host's decision.
 *
 * Life cycle:
 *
 *     clf_program *prog;  clf_ctx *ctx;  clf_verdict v;
 *     char err[CLF_ERRMSG_SIZE];
 *     clf_program_load(bytes, len, NULL, &prog, err, sizeof err);  // once
 *     clf_ctx_new(prog, &ctx, err, sizeof err);                    // per thread
 *     for each request:
 *         clf_ctx_reset(ctx);
 *         clf_ctx_set_method(ctx, "GET", 3);   // ... path, query, headers
 *         clf_eval(ctx, &v);                   // v.verdict, v.reason
 *     (or, with the headers in an array, clf_ctx_set_request() in place of
 *     the reset and the set and add calls)
 *     clf_ctx_free(ctx);  clf_program_free(prog);
 *
 * Threading: a clf_program is immutable once clf_program_load() returns
 * and may be used by any number of threads at once. A clf_ctx belongs to
 * one thread at a time. The library keeps no global mutable state; it never
 * calls hs_set_allocator().
 *
 * Errors: every function that can fail returns a clf_status. CLF_OK is 0;
 * errors are negative. Where a function takes an `err`/`errlen` buffer it
 * writes a NUL-terminated, human-readable message there on failure
 * (truncated to errlen bytes; `err` may be NULL when errlen is 0). The
 * library never aborts, never prints and never exits.
 *
 * Memory: classifying a request (clf_ctx_reset, clf_ctx_set_*,
 * clf_ctx_add_header, clf_ctx_set_request, clf_eval) allocates nothing. All memory a context
 * needs is allocated by clf_ctx_new().
 *
 * Strings are byte slices (pointer + length in bytes); they need not be
 * NUL-terminated nor valid UTF-8.
 */
#ifndef CLASSIFY_H
#define CLASSIFY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(CLF_BUILDING_LIBRARY) && defined(__GNUC__)
#define CLF_API __attribute__((visibility("default")))
#else
#define CLF_API
#endif

#define CLF_VERSION_MAJOR 0
#define CLF_VERSION_MINOR 1
#define CLF_VERSION_PATCH 0
#define CLF_VERSION_NUMBER                                                    \
    (CLF_VERSION_MAJOR * 1000000 + CLF_VERSION_MINOR * 1000 + CLF_VERSION_PATCH)
#define CLF_VERSION_STRING "0.1.0"

/* A comfortable size for the `err` buffers below; longer messages are
 * truncated, never overflowed. */
#define CLF_ERRMSG_SIZE 256

/* Status codes. */
typedef enum clf_status {
    CLF_OK = 0,
    CLF_E_NOMEM = -1,   /* an allocation failed; nothing was leaked */
    CLF_E_INVALID = -2, /* misuse: NULL handle, bad argument */
    CLF_E_FORMAT = -3,  /* the rules file is malformed, truncated or corrupt */
    CLF_E_VERSION = -4, /* the rules file has an unsupported format version */
    CLF_E_VERIFY = -5,  /* the bytecode was rejected by the verifier */
    CLF_E_BACKEND = -6, /* Hyperscan failed (database, scratch or scan) */
    CLF_E_LIMIT = -7,   /* a limit was exceeded (see clf_limit) */
    CLF_E_STATE = -8,   /* the call is not valid in the object's state */
    CLF_E_IO = -9,      /* a file could not be opened or read (clf_ipdb_open, clf_keyring_load:
                           the message says which and why) */
    CLF_E_SINK = -11    /* a rewriter's output sink asked to stop */
} clf_status;

/* Returns a static, NUL-terminated English description of `status`
 * ("unknown status" for values not listed above). Thread-safe. */
CLF_API const char *clf_strerror(int status);

/* The library's version as CLF_VERSION_NUMBER / CLF_VERSION_STRING of the
 * build that produced it, so a header/library mismatch can be detected. */
CLF_API int clf_version_number(void);
CLF_API const char *clf_version_string(void);

/* The rules-file format version this library reads and writes. A file with
 * another version is refused with CLF_E_VERSION. */
CLF_API uint32_t clf_format_version(void);

/* The regex library this process runs: "Hyperscan" (Intel's) or
 * "Vectorscan" (its maintained fork), and that library's version:
 * hs_version()'s "MAJOR.MINOR.PATCH" and the release date when it gives
 * one ("5.4.0 2021-01-26"; Vectorscan 5.4.9 gives none). Both static,
 * never NULL. A rules file records which library built its databases; loading
 * it under the other rebuilds them from the stored patterns (slower to
 * load, same verdicts: docs/format.md). Thread-safe. */
CLF_API const char *clf_matcher_name(void);
CLF_API const char *clf_matcher_version(void);

/* ------------------------------------------------------------------------ */
/* Options for loading a program. */

typedef struct clf_options clf_options;

/* The default of each limit below, for hosts that size their own buffers
 * or options the same way (docs/limits.md). */
#define CLF_DEFAULT_FILE_BYTES (UINT64_C(64) << 20)          /* 64 MiB */
#define CLF_DEFAULT_HEADERS 256
#define CLF_DEFAULT_WORKSPACE_BYTES (UINT64_C(256) << 10)    /* 256 KiB */
#define CLF_DEFAULT_HEADER_VALUE_BYTES (UINT64_C(64) << 10)  /* 64 KiB */
#define CLF_DEFAULT_HEADER_BYTES (UINT64_C(256) << 10)       /* 256 KiB */
#define CLF_DEFAULT_PATTERNS 1000000
#define CLF_DEFAULT_REGISTERS 65536 /* also the ceiling */
#define CLF_DEFAULT_SIGNATURE_SKEW 60 /* seconds (clf_options_set_signature_skew) */

/* Limits, each with a default (CLF_DEFAULT_*, docs/limits.md). */
typedef enum clf_limit {
    /* Largest rules file clf_program_load() accepts, in bytes.
     * Default 64 MiB. */
    CLF_LIMIT_FILE_BYTES = 0,
    /* Most headers a context records per request; clf_ctx_add_header()
     * returns CLF_E_LIMIT past it. Default 256. */
    CLF_LIMIT_HEADERS = 1,
    /* Bytes of per-context string workspace for values the program builds
     * while classifying (lower(), repeated headers joined with ", ").
     * clf_eval() returns CLF_E_LIMIT when a request needs more.
     * Default 256 KiB. */
    CLF_LIMIT_WORKSPACE_BYTES = 2,
    /* Longest header value clf_ctx_add_header() accepts, in bytes.
     * Default 64 KiB. */
    CLF_LIMIT_HEADER_VALUE_BYTES = 3,
    /* Most bytes of header names and values per request, all headers
     * together. Default 256 KiB. */
    CLF_LIMIT_HEADER_BYTES = 4,
    /* Most Hyperscan patterns a rules file may hold. Default 1,000,000. */
    CLF_LIMIT_PATTERNS = 5,
    /* Most registers one function of a rules file may use (the context
     * allocates this many per function). Default 65,536, the format's
     * ceiling. */
    CLF_LIMIT_REGISTERS = 6
} clf_limit;

/* Creates an options object holding the defaults. Returns CLF_OK and
 * stores it in *out, or CLF_E_INVALID (out is NULL) or CLF_E_NOMEM. The
 * caller owns it and frees it with clf_options_free(). Options are only
 * read during clf_program_load(); they may be freed right after it. */
CLF_API clf_status clf_options_new(clf_options **out);

/* Frees `opts`. NULL is allowed and does nothing. */
CLF_API void clf_options_free(clf_options *opts);

/* Sets limit `which` to `value`. Returns CLF_OK, or CLF_E_INVALID for an
 * unknown limit, a value of 0, or a value above the limit's ceiling
 * (CLF_LIMIT_REGISTERS: 65,536; the per-request limits: 2^32 - 1). */
CLF_API clf_status clf_options_set_limit(clf_options *opts, clf_limit which,
                                         uint64_t value);

/* A host allocator: `alloc` returns `size` bytes aligned for any type
 * (as malloc does) or NULL; `free` releases a block `alloc` returned (never
 * called with NULL). Both get the `ud` given with them. They may be called
 * from any thread that uses a program or context made with them. */
typedef void *(*clf_alloc_fn)(void *ud, size_t size);
typedef void (*clf_free_fn)(void *ud, void *ptr);

/* Makes programs loaded with `opts`, and the contexts made from them,
 * allocate through alloc/free_fn instead of malloc/free. That covers all
 * of the library's own memory, including the Hyperscan databases read
 * from the file (placed with hs_deserialize_database_at). It does not
 * cover Hyperscan's scratch (hs_alloc_scratch) or a database Hyperscan
 * recompiles (see clf_program_load): those use Hyperscan's allocator,
 * which the library never changes (hs_set_allocator is process-wide),
 * nor PCRE2's JIT code and JIT stacks for captures (executable memory and
 * stacks come from PCRE2's own allocator). Pass both NULL to go back to
 * malloc/free. Returns CLF_OK, or
 * CLF_E_INVALID when opts is NULL or only one function is given. The
 * options object itself is always allocated with malloc. */
CLF_API clf_status clf_options_set_allocator(clf_options *opts, clf_alloc_fn alloc,
                                             clf_free_fn free_fn, void *ud);

/* IP databases: what ip.asn(), ip.asn_org() and ip.country() answer
 * from (docs/language.md, "IP addresses"). A database is a MaxMind DB
 * file (the MaxMind DB format 2.0: GeoLite2-ASN, GeoIP2-ISP,
 * GeoLite2-Country, GeoIP2-City, DB-IP's free ASN and country files...),
 * read with libmaxminddb and memory-mapped, so that every program and
 * thread shares one copy and a lookup allocates nothing.
 *
 * clf_ipdb_open opens `path`: CLF_OK and the database in *out; CLF_E_IO
 * (it cannot be opened or read), CLF_E_FORMAT (not a MaxMind database, or
 * its metadata is corrupt: libmaxminddb's message), CLF_E_NOMEM,
 * CLF_E_INVALID (NULL argument); `err` says which. Its memory comes from
 * malloc and libmaxminddb (not the options' allocator, which it precedes).
 * Any number of threads may use an open database at once. A corrupt
 * search tree or data section found later makes lookups answer "unknown",
 * never fail. */
typedef struct clf_ipdb clf_ipdb;
CLF_API clf_status clf_ipdb_open(const char *path, clf_ipdb **out, char *err, size_t errlen);
/* Closes it (NULL-safe). No program loaded with it may be used afterwards. */
CLF_API void clf_ipdb_close(clf_ipdb *db);
/* The database's type from its metadata ("GeoLite2-ASN"), "" for NULL.
 * Owned by the database. */
CLF_API const char *clf_ipdb_type(const clf_ipdb *db);

/* Adds an open database to those programs loaded with `opts` read, in
 * the order added: for each address, each field (ASN, organization,
 * country) comes from the first database that has it, so an ASN and a
 * country database can be combined. The program keeps the pointer: the
 * database must stay open as long as the program. At most 4 per options.
 * Returns CLF_OK, CLF_E_INVALID (NULL argument) or CLF_E_LIMIT (a fifth).
 * Without any, ip.asn() is 0 and the strings are "". */
CLF_API clf_status clf_options_add_ipdb(clf_options *opts, const clf_ipdb *db);

/* Sets which proxies are trusted to report the client's address, for
 * `req.client_ip` (docs/language.md, "Client IP"). `list` holds IPv4 and
 * IPv6 addresses and CIDR prefixes ("10.0.0.0/8", "fc00::/7", "::1")
 * separated by commas and/or ASCII whitespace; an empty list (the default)
 * trusts no proxy, so `req.client_ip` is the peer address. IPv4-mapped
 * IPv6 addresses (::ffff:a.b.c.d) are the same as the IPv4 address.
 * Replaces any earlier list. Returns CLF_OK, CLF_E_INVALID (NULL opts,
 * NULL list with len > 0, or an entry that does not parse: `err` names
 * it), or CLF_E_NOMEM. */
CLF_API clf_status clf_options_set_trusted_proxies(clf_options *opts,
                                                   const char *list, size_t len,
                                                   char *err, size_t errlen);

/* ------------------------------------------------------------------------ */
/* Key rings: the keys HTTP Message Signatures are verified with.
 *
 * Rules read `req.signature_status`, `req.signature_agent` and
 * `req.signature_keyid` (docs/language.md; docs/signatures.md says what
 * is verified and what is not). The signatures are those of RFC 9421 as
 * Web Bot Auth profiles them (draft-meunier-webbotauth-httpsig-protocol):
 * Signature-Input and Signature fields, tag "web-bot-auth", created and
 * expires parameters, @authority or @target-uri covered, Ed25519 keys
 * (RFC 9421 section 3.3.6) found by their `keyid`, the key's JWK SHA-256
 * thumbprint (RFC 7638; RFC 8037 appendix A.3) or its JWK "kid".
 *
 * The library never fetches keys: the host gives them, as JWK Sets
 * (RFC 7517 section 5; the key directory format of the draft, "Directory
 * Format"), to a key ring, and the ring to the options a program is
 * loaded with (clf_options_set_keyring). A set may name the
 * Signature-Agent URL it was fetched from: then a valid signature whose
 * covered Signature-Agent member names that URL is attributed to it
 * (`req.signature_agent`), and one that names another URL is invalid
 * (the draft: "Key lookup MUST be keyed on the (URL, key) pair"). Keys of
 * a set that names no URL verify signatures but attribute them to no URL.
 *
 *     clf_keyring *ring;
 *     clf_keyring_new(&ring);
 *     clf_keyring_load(ring, "/etc/classify/keys", err, sizeof err);
 *     clf_options_set_keyring(opts, ring);
 *     clf_program_load(bytes, len, opts, &prog, err, sizeof err);  // copies the keys
 *     clf_keyring_free(ring);
 *
 * Threading: a ring is used by one thread at a time while keys are added;
 * it may be read (clf_keyring_count, clf_options_set_keyring, a load) by
 * any number of threads once no thread adds to it. */
typedef struct clf_keyring clf_keyring;

/* Creates an empty key ring. Returns CLF_OK and stores it in *out, or
 * CLF_E_INVALID (out is NULL) or CLF_E_NOMEM. The caller owns it and
 * frees it with clf_keyring_free(). Its memory comes from malloc. */
CLF_API clf_status clf_keyring_new(clf_keyring **out);

/* Frees `ring`. NULL is allowed and does nothing. Programs loaded with it
 * hold their own copy and are not affected. */
CLF_API void clf_keyring_free(clf_keyring *ring);

/* Adds the keys of the JWK Set json[0..len) (copied; need not be
 * NUL-terminated), attributed to the Signature-Agent URL agent[0..agent_len)
 * (an https URL, for example "https://signature-agent.test"; compared
 * after RFC 3986 section 6.2.2 and 6.2.3 normalization, with query and
 * fragment dropped), or, when agent_len is 0, to the URL in the set's own
 * top-level "signature_agent" member (a string; a member of ours, which
 * other JWK Set readers ignore as RFC 7517 section 5 says), or to none.
 *
 * A key is taken when its "kty" is "OKP" and its "crv" "Ed25519"
 * (RFC 8037 section 2) with "x" 32 bytes of unpadded base64url that are a
 * point of the curve, and it is meant for verifying: "use" absent or
 * "sig", "key_ops" absent or listing "verify", "alg" absent or one of
 * "ed25519" (RFC 9421 section 6.2.2), "EdDSA", "Ed25519". Other keys (RSA,
 * EC, ...) are skipped: RSA-PSS, ECDSA and HMAC signatures are not
 * verified by this version. "nbf" and "exp" (integers, seconds since the
 * epoch) bound when a key verifies.
 *
 * All or nothing: on error the ring is as it was. Returns CLF_OK;
 * CLF_E_INVALID (NULL ring, NULL json or agent with a length > 0);
 * CLF_E_FORMAT with a message in err when the set is malformed: not JSON
 * (RFC 8259, duplicate member names included: line and column), no
 * "keys" array, an element that is not an object, a member of the wrong
 * JSON type, an "x" that is not an Ed25519 public key, a "d" member (a
 * private key: a directory publishes public keys only), a URL that is not
 * https, more than 65,536 keys in the ring; CLF_E_NOMEM. */
CLF_API clf_status clf_keyring_add_jwks(clf_keyring *ring, const char *json, size_t len,
                                        const char *agent, size_t agent_len, char *err,
                                        size_t errlen);

/* Adds the JWK Set in file `path` (NUL-terminated), as
 * clf_keyring_add_jwks with no agent argument (the file's own
 * "signature_agent" member names its URL), or, when `path` is a
 * directory, every regular file in it whose name ends in ".json" (not
 * subdirectories, not hidden files), in byte order of their names. A
 * file may hold at most 1 MiB. All or nothing across the files: on error
 * the ring is as it was, and err names the file and the problem
 * ("keys/a.json: key 2: \"x\" is not base64url of 32 bytes").
 * Returns CLF_OK; CLF_E_INVALID (NULL argument); CLF_E_IO (the file or
 * directory cannot be opened or read, or a file is over 1 MiB: the
 * system's reason in err); CLF_E_FORMAT (a malformed set, as above; a
 * directory without a ".json" file); CLF_E_NOMEM. */
CLF_API clf_status clf_keyring_load(clf_keyring *ring, const char *path, char *err,
                                    size_t errlen);

/* The number of keys in `ring` (0 for NULL). */
CLF_API size_t clf_keyring_count(const clf_keyring *ring);

/* Makes programs loaded with `opts` verify signatures with the keys of
 * `ring`: each load copies them (from the program's allocator), so the
 * ring must stay alive and unchanged until the loads that use `opts`
 * have returned, and may be freed after. NULL removes the ring (the
 * default): every signature is then invalid, its key unknown. Returns
 * CLF_OK, or CLF_E_INVALID when opts is NULL. */
CLF_API clf_status clf_options_set_keyring(clf_options *opts, const clf_keyring *ring);

/* How far a signature's `created` may lie in the future and its
 * `expires` in the past, in seconds, for clocks that disagree (RFC 9421
 * section 3.2.1 leaves it to the verifier). Default
 * CLF_DEFAULT_SIGNATURE_SKEW (60); at most 86,400. Returns CLF_OK, or
 * CLF_E_INVALID (NULL opts, a value over the ceiling). */
CLF_API clf_status clf_options_set_signature_skew(clf_options *opts, uint32_t seconds);

/* ------------------------------------------------------------------------ */
/* Programs. */

typedef struct clf_program clf_program;

/* Loads and verifies a compiled rules file.
 *
 * `bytes`/`len`: the whole file. It is only read during the call: the
 * program copies what it keeps, so the caller may free the bytes as soon as
 * this returns. `opts` may be NULL for defaults.
 *
 * Checks, in order (the message names which failed): the size limit, the
 * magic number and corruption detector, the format version, the declared
 * file size against `len` (truncation), the XXH3-64 checksum over the file,
 * every section's bounds, then the bytecode verifier. Serialized Hyperscan
 * databases are deserialized (hs_deserialize_database); one that this
 * Hyperscan or CPU cannot use (HS_DB_VERSION_ERROR, HS_DB_PLATFORM_ERROR)
 * is rebuilt from the patterns stored beside it.
 *
 * On success returns CLF_OK and stores a new program in *out; the caller
 * frees it with clf_program_free() after every context made from it.
 * On failure *out is set to NULL, a message is written to `err`, and one
 * of CLF_E_INVALID, CLF_E_NOMEM, CLF_E_LIMIT, CLF_E_FORMAT, CLF_E_VERSION,
 * CLF_E_VERIFY, CLF_E_BACKEND is returned.
 * Thread-safe: concurrent loads are independent. */
CLF_API clf_status clf_program_load(const void *bytes, size_t len,
                                    const clf_options *opts, clf_program **out,
                                    char *err, size_t errlen);

/* The value of limit `which` that `prog` was loaded with (the default or
 * what clf_options_set_limit() set), or 0 for a NULL program or an unknown
 * limit. Thread-safe. */
CLF_API uint64_t clf_program_limit(const clf_program *prog, clf_limit which);

/* 1 when the rules read `req.rdns` or `req.rdns_checked`, so that a host
 * resolves the client address's reverse DNS (clf_ctx_set_rdns) only for
 * rules that use it; 0 otherwise, and for NULL. Looks at every function
 * of the program, called or not; walks the code each time (call it once
 * per loaded program, not per request). Thread-safe; never allocates. */
CLF_API int clf_program_reads_rdns(const clf_program *prog);

/* Frees `prog` and its Hyperscan databases. NULL is allowed. Every
 * context made from it must have been freed first. */
CLF_API void clf_program_free(clf_program *prog);

/* Writes the disassembly of `prog` (one instruction per line, with the
 * source line of each when the file recorded positions) by calling
 * `write(ud, text, len)` one or more times. Returns CLF_OK or
 * CLF_E_INVALID. Thread-safe (the program is not modified). */
typedef void (*clf_write_fn)(void *ud, const char *text, size_t len);
CLF_API clf_status clf_program_disassemble(const clf_program *prog,
                                           clf_write_fn write, void *ud);

/* Finds the entry filter called `name` (name_len bytes; need not be
 * NUL-terminated) in `prog`, for clf_eval_filter(). The entry filters are
 * `main` and every other filter of the file the rules were compiled from
 * (not its imports) that decides on every path: each path ends in accept
 * or reject, with no `pass` and no falling off its end (docs/format.md,
 * "Entry filters"; `classifyc --dump` marks them). Names are compared byte
 * for byte, case included.
 *
 * On success returns CLF_OK and stores the filter's number in *filter;
 * numbers are only meaningful for `prog` and stay valid until
 * clf_program_free(). On failure *filter is not written, a message is
 * written to `err`, and CLF_E_INVALID is returned: prog or filter is NULL,
 * name is NULL with name_len > 0, or there is no such entry filter, the
 * message saying why: the compiled file has no filter of that name (the
 * message lists the entry filters), or the filter can end without a
 * verdict. Allocates nothing. Thread-safe (the program is not modified). */
CLF_API clf_status clf_program_find_filter(const clf_program *prog, const char *name,
                                           size_t name_len, uint32_t *filter,
                                           char *err, size_t errlen);

/* ------------------------------------------------------------------------ */
/* Per-thread classification contexts. */

typedef struct clf_ctx clf_ctx;

/* Creates a context for `prog`: registers, one Hyperscan scratch big enough
 * for all the program's databases (hs_alloc_scratch), the scan bitsets,
 * the string workspace and 4 bytes per pattern test for clf_eval_explain;
 * when the program captures (`s.capture(...)`), PCRE2's match data and
 * backtracking frames (about 130 KiB and up, from the host allocator) and
 * a 1 MiB JIT stack (reserved by PCRE2's JIT allocator, mmap, like JIT
 * code: outside the host allocator); when the rules read a signature field
 * (`req.signature_*`), a 25 KiB verification scratch and 32 bytes per
 * CLF_LIMIT_HEADERS header line (a signature may cover any header, so
 * every line is kept, borrowed like the others). Returns CLF_OK and stores it in *out, or
 * CLF_E_INVALID, CLF_E_NOMEM, CLF_E_BACKEND (with a message in `err`).
 * The context borrows `prog`, which must outlive it. A context may be used
 * by one thread at a time; make one per thread. */
CLF_API clf_status clf_ctx_new(const clf_program *prog, clf_ctx **out,
                               char *err, size_t errlen);

/* Frees `ctx`. NULL is allowed. */
CLF_API void clf_ctx_free(clf_ctx *ctx);

/* Starts a new request: forgets the method, path, query, headers and the
 * last verdict. Method, path and query become empty strings. Never fails,
 * never allocates. */
CLF_API void clf_ctx_reset(clf_ctx *ctx);

/* Set the request line's parts. The bytes are borrowed, not copied: they
 * must stay valid and unchanged until clf_eval() has returned (or until the
 * next clf_ctx_reset()). `path` is the request target up to, not
 * including, the first '?'; `query` is what follows that '?' (empty when
 * there is none). No decoding is done: the program sees the bytes as given.
 * Return CLF_OK, or CLF_E_INVALID (NULL ctx, or NULL ptr with len > 0). */
CLF_API clf_status clf_ctx_set_method(clf_ctx *ctx, const char *ptr,
                                      size_t len);
CLF_API clf_status clf_ctx_set_path(clf_ctx *ctx, const char *ptr, size_t len);
CLF_API clf_status clf_ctx_set_query(clf_ctx *ctx, const char *ptr,
                                     size_t len);

/* Adds one header field. Names are matched ASCII case-insensitively
 * (RFC 9110, section 5.1). A header given more than once is seen by the
 * program as its values joined with ", " in the order added (RFC 9110,
 * section 5.3). Both slices are borrowed like the request line's.
 * Headers the program never inspects are not stored, but they count
 * toward CLF_LIMIT_HEADERS: the limit bounds the request, not the rules.
 * Returns CLF_OK, CLF_E_INVALID, or CLF_E_LIMIT when the request already
 * has CLF_LIMIT_HEADERS headers, when the value is longer than
 * CLF_LIMIT_HEADER_VALUE_BYTES, or when the request's header bytes would
 * pass CLF_LIMIT_HEADER_BYTES (clf_ctx_errmsg() says which). The header is
 * then ignored; the host decides whether to classify the request anyway
 * or refuse it (for example with 431, RFC 6585). */
CLF_API clf_status clf_ctx_add_header(clf_ctx *ctx, const char *name,
                                      size_t name_len, const char *value,
                                      size_t value_len);

/* One header field, for clf_ctx_set_request(): `name` is name_len bytes
 * and `value` value_len bytes (either may be NULL when its length is 0),
 * borrowed as clf_ctx_add_header() borrows them. */
typedef struct clf_header {
    const char *name;
    size_t name_len;
    const char *value;
    size_t value_len;
} clf_header;

/* A whole request in one call: does what clf_ctx_reset(),
 * clf_ctx_set_method(), clf_ctx_set_path(), clf_ctx_set_query() and
 * clf_ctx_add_header() for headers[0], ..., headers[nheaders - 1] in that
 * order do, with the same meaning, borrowing and limits, for the cost of
 * one library call rather than one per field and header (a host that has
 * the request's headers in an array already: docs/performance.md). The
 * reset comes first, so the peer address, reverse DNS name, time and
 * scheme are forgotten too: set them after this call. `method`, `path`,
 * `query` and `headers` may be NULL when their length (or nheaders) is 0;
 * the array is read during the call only, the bytes it points to are
 * borrowed until clf_eval() has returned (or the next reset).
 * Returns CLF_OK; CLF_E_INVALID (NULL ctx, a NULL pointer with a nonzero
 * length, in the arguments or in a header) or CLF_E_LIMIT (as
 * clf_ctx_add_header(): clf_ctx_errmsg() names the header's index and the
 * limit). On an error in headers[i] the context holds the request line
 * and headers[0..i-1]; headers[i] and the ones after it are not added.
 * Never allocates. The context belongs to the calling thread, as for
 * every clf_ctx_* call. */
CLF_API clf_status clf_ctx_set_request(clf_ctx *ctx, const char *method, size_t method_len,
                                       const char *path, size_t path_len, const char *query,
                                       size_t query_len, const clf_header *headers,
                                       size_t nheaders);

/* Sets the address of the peer the request came from (the TCP client:
 * the last proxy, when there is one), as text: an IPv4 dotted quad
 * ("192.0.2.10") or an IPv6 address (RFC 4291 section 2.2, optionally in
 * brackets; no zone, no port). The address is parsed and copied; the
 * bytes are not kept. `req.client_ip` is derived from it and the trusted
 * proxies (clf_options_set_trusted_proxies) by the rule of
 * docs/language.md ("Client IP"; nginx's real_ip_recursive): forwarding
 * headers count only when the peer is trusted. Until it is set, after
 * clf_ctx_reset(), or when it does not parse, the peer is unknown and
 * `req.client_ip` is the invalid address (headers are then never
 * trusted). Returns CLF_OK, or CLF_E_INVALID (NULL ctx, NULL addr with
 * len > 0, or an unparsable address, which is then stored as unknown).
 * Never allocates. */
CLF_API clf_status clf_ctx_set_peer(clf_ctx *ctx, const char *addr, size_t len);

/* The address the rules see as `req.client_ip`, for a host that looks
 * something up about it (its reverse DNS, for clf_ctx_set_rdns): derived
 * from the peer and, when the peer is a trusted proxy, the forwarding
 * headers (X-Forwarded-For, X-Real-IP) added so far, by the rule of
 * docs/language.md ("Client IP"). Call it after the peer and every header
 * are set: the result is computed once per request and kept (as the
 * rules' own reads are). Stores 16 bytes in out (IPv4 as ::ffff:a.b.c.d)
 * and 1 in *valid, or 0 in *valid when the address is unknown (no peer).
 * Returns CLF_OK, CLF_E_INVALID (NULL argument) or CLF_E_LIMIT (joining
 * repeated forwarding headers passed CLF_LIMIT_WORKSPACE_BYTES). Never
 * allocates. */
CLF_API clf_status clf_ctx_client_ip(clf_ctx *ctx, uint8_t out[16], int *valid);

/* The host's answer for the reverse DNS of the client address
 * (clf_ctx_client_ip), for `req.rdns` and `req.rdns_checked`. Looking it
 * up is the host's job (the library never blocks on DNS): a PTR query
 * (RFC 1035 section 3.5), then a forward query of the name it gives (A or
 * AAAA) that must list the address again ("forward-confirmed reverse
 * DNS", as crawler operators document: docs/language.md, "The
 * request"). Give the confirmed name (len bytes, printable ASCII, at most
 * 253 bytes after one trailing dot is dropped; copied and lower-cased),
 * or name NULL and len 0 when the lookups found no name or did not
 * confirm it. Either way `req.rdns_checked` is then true; until this is
 * called (and after clf_ctx_reset) it is false and `req.rdns` is "",
 * which is what a host should leave when the answer is not known yet.
 * Returns CLF_OK, or CLF_E_INVALID (NULL ctx, NULL name with len > 0, a
 * name too long or with bytes outside 0x21-0x7e: clf_ctx_errmsg() says
 * which; the state is then unchanged). Never allocates. */
CLF_API clf_status clf_ctx_set_rdns(clf_ctx *ctx, const char *name, size_t len);

/* The time of the request in seconds since the epoch (1970-01-01 UTC),
 * against which signatures' `created` and `expires` and keys' "nbf" and
 * "exp" are checked. Until it is set (and after clf_ctx_reset) the
 * verification reads the system clock (time()) when it runs. For hosts
 * that stamp requests on arrival, and for tests that must not depend on
 * the clock. It is also the state calls' time (clf_ctx_set_time_ms:
 * that second's start; any int64_t is taken, the milliseconds saturate).
 * Returns CLF_OK, or CLF_E_INVALID (NULL ctx). Never allocates. */
CLF_API clf_status clf_ctx_set_time(clf_ctx *ctx, int64_t seconds);

/* The request's scheme ("https" or "http", as the host received it:
 * scheme[0..len), borrowed like the request line until the next
 * clf_ctx_reset). A signature that covers @scheme or @target-uri needs it
 * (RFC 9421 sections 2.2.4 and 2.2.2), and @authority drops the scheme's
 * default port from the Host header (section 2.2.3) only when it is
 * known. Unknown until set. Returns CLF_OK, or CLF_E_INVALID (NULL ctx,
 * NULL scheme with len > 0). Never allocates. */
CLF_API clf_status clf_ctx_set_scheme(clf_ctx *ctx, const char *scheme, size_t len);

typedef enum clf_verdict_kind { CLF_REJECT = 0, CLF_ACCEPT = 1 } clf_verdict_kind;

typedef struct clf_verdict {
    clf_verdict_kind verdict;
    /* The reason given by the rule that decided, or NULL when it gave none.
     * Owned by the program: valid until clf_program_free(). The bytes are
     * also NUL-terminated at reason[reason_len]. */
    const char *reason;
    size_t reason_len;
} clf_verdict;

/* Runs the program's `main` filter on the request set up in `ctx`.
 * On success returns CLF_OK and fills *out. Errors: CLF_E_INVALID (NULL
 * argument), CLF_E_LIMIT (the string workspace was exhausted),
 * CLF_E_BACKEND (a Hyperscan scan failed; hs_scan's error code is in
 * clf_ctx_errmsg()). On error *out is not written and clf_ctx_errmsg()
 * says what failed. Allocates nothing. The program always terminates:
 * bytecode jumps only forward. The first `req.signature_*` field the
 * rules read verifies the request's signatures (at most once per request,
 * docs/signatures.md), building each signature base in what is left of the
 * string workspace; a base that does not fit makes the signature invalid,
 * not the call fail. */
CLF_API clf_status clf_eval(clf_ctx *ctx, clf_verdict *out);
/* A rules file compiled from rewrite sets alone has no `main`: clf_eval
 * and clf_eval_explain return CLF_E_STATE for it (clf_ctx_errmsg() says
 * so). */

/* clf_eval, running entry filter `filter` (from clf_program_find_filter on
 * the context's program) instead of `main`; clf_eval(ctx, out) is
 * clf_eval_filter of main. Every entry filter sees the same request and
 * shares the per-request scans: evaluating a second filter on the same
 * request (without clf_ctx_reset) rescans nothing. Returns what clf_eval
 * returns, and also CLF_E_INVALID when `filter` is not an entry filter of
 * the program (clf_ctx_errmsg() says so). Allocates nothing; one thread at
 * a time per context, as clf_eval. */
CLF_API clf_status clf_eval_filter(clf_ctx *ctx, uint32_t filter, clf_verdict *out);

/* One step of an explained classification (clf_eval_explain): something
 * the rules read, computed, compared or decided, and where in the source.
 * For example:
 *   header "user-agent" = "Mozilla/5.0 (compatible; GPTBot/1.2)"
 *   contains_word([161 strings]i) on header user-agent "Mozilla/5.0 (compatible;
 *       GPTBot/1.2)" -> true: matched "GPTBot"
 *   5 < 100 -> true
 *   condition false: jump to line 84
 *   reject "ai-robots-txt"
 * The text is for people and may change between versions; do not parse
 * it. Values are quoted and escaped (\" \\ \xHH), so the text is one line
 * of printable ASCII; at most 80 bytes of each value are shown, then
 * "...". */
typedef struct clf_explain_step {
    /* The source file as given to classifyc, or NULL when the rules file
     * has no position for this step. Owned by the program: valid until
     * clf_program_free(). */
    const char *file;
    uint32_t line, col; /* 1-based; 0 when unknown */
    /* The step, NUL-terminated at text[text_len]. Owned by the library:
     * valid only during the callback (copy it to keep it). */
    const char *text;
    size_t text_len;
    /* Call depth: 0 in `main`, 1 in what it calls, ... Calls the compiler
     * inlined (small fns and filters, unless compiled with classifyc
     * --no-inline) add no depth and give no call or return step. */
    uint32_t depth;
} clf_explain_step;

/* Receives the steps of clf_eval_explain, in the order they happen. It
 * must not call into `ctx`. */
typedef void (*clf_explain_fn)(void *ud, const clf_explain_step *step);

/* clf_eval, telling `fn(ud, step)` the path the request takes through the
 * rules: every header and field read, comparison, pattern test (with the
 * string-set element or regex that matched), arithmetic and string or IP
 * operation, call and return, branch, and finally the accept or reject.
 * Returns exactly what clf_eval would return for the request, with the
 * same verdict in *out and the same errors (on error, the steps so far
 * have been given and *out is not written). Allocates nothing: the text
 * is built in a buffer on the stack (about 1 KiB) and the context's
 * memory. Slower than clf_eval, which pays nothing for this function's
 * existence: meant for debugging a ruleset, not for every request.
 * Errors: CLF_E_INVALID when ctx, out or fn is NULL; otherwise as
 * clf_eval. Thread-safety: as clf_eval (one thread per context); fn runs
 * on the calling thread. */
CLF_API clf_status clf_eval_explain(clf_ctx *ctx, clf_verdict *out,
                                    clf_explain_fn fn, void *ud);

/* clf_eval_explain of entry filter `filter` (clf_program_find_filter):
 * returns exactly what clf_eval_filter would, with the same errors, and
 * gives the steps as clf_eval_explain does (depth 0 is `filter`). */
CLF_API clf_status clf_eval_filter_explain(clf_ctx *ctx, uint32_t filter, clf_verdict *out,
                                           clf_explain_fn fn, void *ud);

/* A NUL-terminated message describing the last error that clf_eval(),
 * clf_eval_filter() (and their _explain forms) or clf_ctx_add_header()
 * returned on `ctx` ("" when the last call
 * succeeded or after clf_ctx_reset()). Owned by the context: valid until
 * the next call on it. Never NULL for a non-NULL ctx. */
CLF_API const char *clf_ctx_errmsg(const clf_ctx *ctx);

/* ------------------------------------------------------------------------ */
/* State: counters, decaying scores and marks that outlive a request
 * (docs/state.md; the language's count(), score_add(), mark()... in
 * docs/language.md, "State").
 *
 * A store holds entries, each named by a stable byte key (below) and of
 * one kind:
 *   - a counter: a sliding-window count over `param` seconds, estimated
 *     from two fixed windows as nginx and Cloudflare do:
 *       estimate = prev * (W - elapsed) / W + cur
 *     where cur counts the window [k*W, (k+1)*W) that holds now, prev the
 *     one before it, elapsed = now - k*W. It is exact when requests are
 *     spread evenly over the previous window; it errs by at most
 *     prev * (the fraction of prev's requests not where it assumes), so
 *     it lies in [cur, cur + prev] and the true count over the last W
 *     seconds too: the error is below prev, the count of one window;
 *   - a score: a sum of additions, each decaying with a half-life of
 *     `param` seconds: v(t) = v(t0) * 2^(-(t - t0) / param);
 *   - a mark: set with a time to live of `param` seconds, set or not.
 *
 * Every entry keeps a local part (what this process's requests did,
 * exact) and a remote part (what a sync layer merged from a fleet, added
 * when read); see clf_store_collect and clf_store_merge.
 *
 * The key of an entry is text, at most CLF_STATE_KEY_MAX bytes:
 *   KIND ":" PARAM ":" NAME ":" TYPE ":" VALUE
 * KIND is "c" (counter), "s" (score) or "m" (mark); PARAM the window,
 * half-life or time to live in decimal seconds; NAME the rules' name
 * ([a-z0-9_], 1-32 bytes); TYPE "ip", "int", "str" or "strh"; VALUE the
 * key's canonical text: an address as vm_ip_format writes it (IPv4 dotted,
 * IPv6 RFC 5952; a network is its first address, "203.0.113.0"), an int
 * in decimal, a str's bytes as they are (at most 64; a longer str is
 * TYPE "strh" and VALUE the 32 lowercase hex digits of its XXH3-128).
 * For example "c:60:pages:ip:203.0.113.0". The same key names the same
 * entry in every process and machine and across rules reloads; a rules
 * file that changes a window changes the key, so it starts afresh. */
#define CLF_STATE_KEY_MAX 128

typedef enum clf_state_kind {
    CLF_STATE_COUNTER = 1,
    CLF_STATE_SCORE = 2,
    CLF_STATE_MARK = 3
} clf_state_kind;

typedef struct clf_store clf_store;

/* A host's own store: the operations the rules' state calls become.
 * Each gets `self` (given to clf_store_wrap), the entry's key (text,
 * keylen <= CLF_STATE_KEY_MAX, not NUL-terminated; borrowed for the call)
 * with its kind and param already parsed out, and the request's time in
 * milliseconds since the epoch. They are called from request threads, any
 * number at once, and must not block for long: a store that must wait for
 * something (a network) answers from what it has. Each returns CLF_OK
 * with its result, or any other status when it has no answer (full,
 * unreachable): the rules then see the defined result of docs/state.md
 * (a count of 0, a score of 0, not marked), never an error.
 *   count:    add `n` (0: only read) to the counter; *out the estimate
 *             over the window afterwards (requests, >= 0)
 *   score:    add `add` (0: only read) to the score; *out its value now
 *             (>= 0)
 *   mark:     set (set = 1) or only test (set = 0) the mark; *out 1 when
 *             it is set (after the call), else 0
 *   destroy:  called once by clf_store_free (may be NULL) */
typedef struct clf_store_ops {
    clf_status (*count)(void *self, const char *key, size_t keylen, uint32_t window_s,
                        uint32_t n, int64_t now_ms, int64_t *out);
    clf_status (*score)(void *self, const char *key, size_t keylen, uint32_t half_life_s,
                        int64_t add, int64_t now_ms, double *out);
    clf_status (*mark)(void *self, const char *key, size_t keylen, uint32_t ttl_s, int set,
                       int64_t now_ms, int *out);
    void (*destroy)(void *self);
} clf_store_ops;

/* Wraps a host's store: CLF_OK and the store in *out; CLF_E_INVALID (NULL
 * ops, out, or any of count, score, mark NULL), CLF_E_NOMEM. `ops` is
 * copied; `self` is borrowed until clf_store_free. */
CLF_API clf_status clf_store_wrap(const clf_store_ops *ops, void *self, clf_store **out);

/* The built-in store in `bytes` of memory (mmap'd, private to the
 * process), all of it reserved at creation and no more ever: at least
 * CLF_STORE_MIN_BYTES, at most 2^40. Entries live in buckets of eight;
 * an entry costs 200 bytes (docs/state.md, "Memory"). The hash that
 * places keys is keyed by a secret seed drawn from getrandom() (seed NULL)
 * or the 16 bytes given (tests), so that nobody outside can aim keys at
 * one bucket. Returns CLF_OK and the store in *out; CLF_E_INVALID (out
 * NULL, bytes out of range), CLF_E_NOMEM (mmap failed), with a message in
 * err. Thread-safe in use: any number of threads and contexts may share
 * it (one lock per bucket, held for a few dozen instructions). */
#define CLF_STORE_MIN_BYTES (UINT64_C(64) << 10) /* 64 KiB */
/* What classify-run and classify-serve make without --state-bytes. */
#define CLF_DEFAULT_STORE_BYTES (UINT64_C(64) << 20) /* 64 MiB: 335,544 entries */
CLF_API clf_status clf_store_new(uint64_t bytes, const uint8_t seed[16], clf_store **out,
                                 char *err, size_t errlen);

/* The built-in store in memory the host provides, so that several
 * processes share it (nginx workers: a shared-memory zone; anything
 * mapped MAP_SHARED at any address in each). `mem` is 64-byte aligned,
 * `bytes` as for clf_store_new. clf_store_format writes an empty store
 * there (once, before any process attaches; seed as for clf_store_new);
 * clf_store_attach makes a handle on a formatted region (in each process:
 * it checks the region's header and size, and refuses CLF_E_FORMAT
 * otherwise). The handle (allocated, 64 bytes) borrows `mem`, which must
 * outlive it; clf_store_free does not free it. The locks are atomics in
 * the region, so they work across processes; a process that dies holding
 * one (a few dozen instructions) leaves that bucket answering "no answer"
 * after a bounded spin, never a hang. Errors: CLF_E_INVALID (NULL,
 * misaligned, size out of range), CLF_E_FORMAT, CLF_E_NOMEM. */
CLF_API clf_status clf_store_format(void *mem, uint64_t bytes, const uint8_t seed[16],
                                    char *err, size_t errlen);
CLF_API clf_status clf_store_attach(void *mem, uint64_t bytes, clf_store **out,
                                    char *err, size_t errlen);

/* Frees the store (NULL-safe): a built-in store's memory (not a host's
 * region), a wrapped store's destroy. No context may use it afterwards. */
CLF_API void clf_store_free(clf_store *store);

/* Figures of a built-in store (all zero for a wrapped one): its bytes,
 * entry capacity, entries in use, evictions, refusals (an entry could not
 * be made: every candidate outranked it, docs/state.md), lock give-ups.
 * Approximate while other threads run. Thread-safe. */
typedef struct clf_store_stats {
    uint64_t bytes, capacity, used, evictions, refused, busy;
} clf_store_stats;
CLF_API void clf_store_get_stats(const clf_store *store, clf_store_stats *out);

/* 1 when the rules of `prog` make state calls (count, score, mark...),
 * so that a host makes a store only for rules that use one; 0 otherwise
 * and for NULL. Thread-safe; never allocates. */
CLF_API int clf_program_uses_state(const clf_program *prog);

/* Makes the rules run on `ctx` read and write `store` (NULL: no store;
 * then every state call has its defined "absent" result). The context
 * borrows it: it must outlive the context, or another call here. Any
 * number of contexts, of any programs, may name one store: it outlives
 * rules reloads. Returns CLF_OK, or CLF_E_INVALID (NULL ctx). */
CLF_API clf_status clf_ctx_set_store(clf_ctx *ctx, clf_store *store);

/* The request's time in milliseconds since the epoch, for the state
 * calls' windows, half-lives and time to live (and, as seconds, what
 * clf_ctx_set_time sets). Unset (after clf_ctx_reset), the state reads
 * CLOCK_REALTIME; set by clf_ctx_set_time, it is that second's start.
 * Returns CLF_OK, or CLF_E_INVALID (NULL ctx). */
CLF_API clf_status clf_ctx_set_time_ms(clf_ctx *ctx, int64_t ms);

/* --- Syncing a built-in store with a fleet (classify-serve --state-redis).
 *
 * clf_store_collect walks up to `max_buckets` buckets from *cursor
 * (start at 0; it stores where to go on, and 0 again after the last
 * bucket) and calls fn for every entry with local changes not yet
 * collected, then forgets those changes (they are now the caller's to
 * deliver; the entry's local values stay exact). Each bucket's lock is
 * held only while its changed entries are copied out (never during fn),
 * so request threads wait at most that long. fn gets a delta valid only
 * during the call, and must not call into the store. Returns CLF_OK,
 * CLF_E_INVALID (NULL argument, a wrapped store). */
typedef struct clf_state_delta {
    const char *key; /* the entry's key (text above), not NUL-terminated */
    size_t keylen;
    clf_state_kind kind;
    uint32_t param;  /* seconds: window, half-life, time to live */
    /* counter: local counts in window number `window` (floor(ms / (param *
     * 1000))) and in window - 1 since the last collect */
    int64_t window;
    uint32_t cur, prev;
    /* score: the local additions since the last collect, decayed to at_ms */
    double score;
    int64_t at_ms;
    /* mark: the expiry (ms since the epoch) of a local set since the last
     * collect */
    int64_t expires_ms;
} clf_state_delta;
typedef void (*clf_state_delta_fn)(void *ud, const clf_state_delta *delta);
CLF_API clf_status clf_store_collect(clf_store *store, uint32_t *cursor, uint32_t max_buckets,
                                     clf_state_delta_fn fn, void *ud);

/* Merges the fleet's value of one entry: the totals the sync layer read
 * from the fleet, this instance's delivered changes included (the store
 * subtracts what it has delivered itself, so local counts stay exact and
 * only the others' are added as the remote part). `key`/`keylen` as in
 * the delta (the kind and param are parsed from it). For a counter,
 * `window` and the fleet's totals `cur` (that window) and `prev`
 * (window - 1); for a score, its fleet value `score` at `at_ms`; for a
 * mark, the fleet's latest expiry `expires_ms` (0: none). The entry is
 * made when missing, under the same eviction rule as a request's.
 * Returns CLF_OK; CLF_E_INVALID (NULL, a key that does not parse, a
 * wrapped store); CLF_E_LIMIT (no room: the eviction rule kept the
 * others); CLF_E_STATE (the bucket stayed locked). */
typedef struct clf_state_remote {
    const char *key;
    size_t keylen;
    int64_t window;
    uint64_t cur, prev;
    double score;
    int64_t at_ms;
    int64_t expires_ms;
} clf_state_remote;
CLF_API clf_status clf_store_merge(clf_store *store, const clf_state_remote *remote);

/* Reads one entry of a built-in store at `now_ms` without changing it:
 * the counter's estimate, the score rounded to the nearest integer (as
 * the rules read it), or 1/0 for a mark, local and
 * remote parts together, in *out (0 when absent). For tests and tools.
 * Returns CLF_OK, CLF_E_INVALID. */
CLF_API clf_status clf_store_peek(clf_store *store, const char *key, size_t keylen,
                                  int64_t now_ms, int64_t *out);

/* Writes one entry of a built-in store's local part as of `now_ms`, as if
 * requests had made it: a counter's current window holds `value` counts
 * (its previous window none), a score is `value` now, a mark was set
 * `value` seconds before now_ms (so it expires param - value seconds
 * after it). For tests ("this address was marked 10 minutes ago").
 * Returns CLF_OK, CLF_E_INVALID, CLF_E_LIMIT (no room). */
CLF_API clf_status clf_store_poke(clf_store *store, const char *key, size_t keylen,
                                  int64_t now_ms, int64_t value);

/* ------------------------------------------------------------------------ */
/* Rewriting response bodies (docs/rewrite.md).
 *
 * A rules file may hold named rewrite sets (`rewrite NAME { PATTERN =>
 * TEMPLATE ... }`, docs/language.md): many search-and-replace rules
 * applied to a body in one pass, fed in chunks of any size, in memory
 * that does not depend on the body. A rewriter is one body's stream: it
 * holds back at most clf_rewriter_holdback() bytes between two feeds and
 * writes every other byte to its sink as soon as it is decided. The
 * output does not depend on how the body was cut into chunks (but in
 * replace_filter semantics, where replace-filter's buffer cap depends on
 * chunks too: docs/rewrite.md).
 *
 *     clf_rewrite_scratch *sc;  clf_rewriter *rw;
 *     clf_rewrite_scratch_new(prog, &sc, err, sizeof err);      // per thread
 *     clf_rewriter_new(prog, "clone_body", 10, sink, ud, &rw, err, sizeof err);
 *     for each chunk: clf_rewriter_feed(rw, sc, p, n);          // allocates nothing
 *     clf_rewriter_finish(rw, sc);
 *     clf_rewriter_reset(rw, sink, ud);                         // the next body
 *     clf_rewriter_free(rw);  clf_rewrite_scratch_free(sc);
 *
 * Memory: clf_rewriter_new allocates the rewriter (a few hundred bytes,
 * the hold-back window and Hyperscan's stream state: clf_rewriter_size),
 * clf_rewrite_scratch_new the per-thread working memory (Hyperscan
 * scratch, a 64 KiB slice buffer, the candidate table, PCRE2 match data
 * and a 1 MiB PCRE2 JIT stack: about 2.3 MB); feeding, finishing and
 * resetting allocate nothing. Memory comes from the program's allocator
 * (clf_options_set_allocator), except Hyperscan's stream state and
 * scratch and PCRE2's JIT stack, which their libraries allocate. */

/* A rewriter's output: n > 0 bytes at p, valid only during the call.
 * Return 0 to go on; anything else stops the body, and the call that
 * wrote returns CLF_E_SINK. The sink must not call the rewriter or its
 * scratch. */
typedef int (*clf_sink_fn)(void *ud, const char *p, size_t n);

/* Per-thread working memory for the rewriters of `prog` (every rewrite
 * set of it). Returns CLF_OK and stores it in *out, or CLF_E_INVALID
 * (NULL argument, or a program without rewrite sets), CLF_E_NOMEM or
 * CLF_E_BACKEND (Hyperscan scratch), with a message in err. One thread
 * at a time; the program must outlive it. */
typedef struct clf_rewrite_scratch clf_rewrite_scratch;
CLF_API clf_status clf_rewrite_scratch_new(const clf_program *prog, clf_rewrite_scratch **out,
                                           char *err, size_t errlen);
/* Frees a scratch (NULL-safe). */
CLF_API void clf_rewrite_scratch_free(clf_rewrite_scratch *sc);

typedef struct clf_rewriter clf_rewriter;

/* Creates a rewriter for the program's rewrite set `name` (name_len
 * bytes), writing to sink(ud, ...). All the memory it will ever use is
 * allocated here. Returns CLF_OK and stores it in *out; CLF_E_INVALID
 * (NULL argument, or no rewrite set of that name: the message lists the
 * sets), CLF_E_NOMEM or CLF_E_BACKEND (hs_open_stream), with a message in
 * err. The program must outlive the rewriter; a rewriter is used by one
 * thread at a time, and may move between threads between calls. */
CLF_API clf_status clf_rewriter_new(const clf_program *prog, const char *name, size_t name_len,
                                    clf_sink_fn sink, void *ud, clf_rewriter **out, char *err,
                                    size_t errlen);
/* Frees a rewriter (NULL-safe). */
CLF_API void clf_rewriter_free(clf_rewriter *rw);

/* Feeds n bytes of the body (p may be NULL when n is 0; n may be 0 or any
 * size: the rewriter works in bounded slices). Output for the bytes that
 * are decided goes to the sink before this returns. Returns CLF_OK;
 * CLF_E_INVALID (NULL rewriter or scratch, or a scratch of another
 * program); CLF_E_STATE (the body was finished, or an earlier call
 * failed: call clf_rewriter_reset); CLF_E_SINK; CLF_E_BACKEND (a
 * Hyperscan scan failed); CLF_E_LIMIT (a PCRE2 workspace limit,
 * docs/rewrite.md). clf_rewriter_errmsg() says what failed. After any
 * error but CLF_E_INVALID and CLF_E_STATE, the body is failed. */
CLF_API clf_status clf_rewriter_feed(clf_rewriter *rw, clf_rewrite_scratch *sc, const char *p,
                                     size_t n);

/* Ends the body: what depends on the end of the data (`$`, `\z`, a
 * trailing `\b`) is decided now, and everything held is written. Returns
 * as clf_rewriter_feed. When the rewriter was given a skip-cache key
 * (clf_rewriter_use_cache), the rules that fired are stored under it. */
CLF_API clf_status clf_rewriter_finish(clf_rewriter *rw, clf_rewrite_scratch *sc);

/* The last n bytes and the end of the body: clf_rewriter_feed then
 * clf_rewriter_finish, except that in replace_filter semantics the
 * buffer cap is not applied between the two, as replace-filter does not
 * apply it to a buffer that carries nginx's last_buf (a static file sent
 * as one buffer is decided whole). */
CLF_API clf_status clf_rewriter_feed_final(clf_rewriter *rw, clf_rewrite_scratch *sc,
                                           const char *p, size_t n);

/* Makes the rewriter ready for the next body, writing to sink(ud, ...);
 * a body left unfinished is dropped without more output. Allocates
 * nothing, needs no scratch, never fails for a non-NULL rewriter
 * (CLF_E_INVALID otherwise). */
CLF_API clf_status clf_rewriter_reset(clf_rewriter *rw, clf_sink_fn sink, void *ud);

/* The most bytes the rewriter retains between two feeds (the hold-back,
 * docs/rewrite.md: the widest rule plus two bytes, at most max_match + 2;
 * replace_filter semantics: 2 max_match + 4098), and the bytes it holds
 * (clf_rewriter_size: its allocations and Hyperscan's stream state).
 * Both 0 for NULL. */
CLF_API uint64_t clf_rewriter_holdback(const clf_rewriter *rw);
CLF_API size_t clf_rewriter_size(const clf_rewriter *rw);

/* What happened to the current body so far. */
typedef struct clf_rewrite_stats {
    uint64_t bytes_in, bytes_out;
    uint64_t replacements; /* matches replaced */
    uint64_t max_held;     /* most bytes retained after any feed */
    uint64_t captures_failed; /* replacements whose groups came out empty because PCRE2's
                                 work limit ran out (docs/rewrite.md, "Time") */
    int gave_up;           /* replace_filter: the buffer cap was exceeded, and the rest
                              of the body passes through (docs/rewrite.md) */
    int skipped;           /* the skip cache said no rule fires: copied unscanned */
} clf_rewrite_stats;

/* Fills *out (CLF_E_INVALID for NULL arguments). */
CLF_API clf_status clf_rewriter_stats(const clf_rewriter *rw, clf_rewrite_stats *out);

/* A NUL-terminated message for the last error of a feed, finish or reset
 * ("" after success). Owned by the rewriter; never NULL for non-NULL rw. */
CLF_API const char *clf_rewriter_errmsg(const clf_rewriter *rw);

/* The per-resource skip cache: a bounded table from a key naming one
 * version of one resource (for example URL + ETag, or URL +
 * Last-Modified; the key must change when the content does) to the set of
 * rules that fired on it. A resource on which no rule fired streams
 * through unscanned the next time. `capacity` keys (rounded up to a
 * multiple of 8) of the rewrite set `name`; keys are hashed to 128 bits
 * (XXH3-128 with a random seed per cache, so a collision is a 2^-128
 * event and cannot be aimed at), of any length; a full 8-key bucket
 * evicts its least recently used key. All
 * memory is allocated here; any number of threads may use a cache at
 * once (it takes a mutex). Returns CLF_OK and stores it in *out, or
 * CLF_E_INVALID (NULL argument, capacity 0, no such set), CLF_E_NOMEM. */
typedef struct clf_rewrite_cache clf_rewrite_cache;
CLF_API clf_status clf_rewrite_cache_new(const clf_program *prog, const char *name,
                                         size_t name_len, uint32_t capacity,
                                         clf_rewrite_cache **out, char *err, size_t errlen);
CLF_API void clf_rewrite_cache_free(clf_rewrite_cache *c);

/* Before the first feed of a body: looks `key` (klen bytes) up in the
 * cache. When it is there and no rule fired on it, the rewriter copies
 * this body to its sink without scanning (clf_rewrite_stats.skipped);
 * otherwise clf_rewriter_finish stores the rules that fired under the
 * key (a body that fails, is reset unfinished, or on which
 * replace_filter semantics gave up at the buffer cap stores nothing). Returns CLF_OK; CLF_E_INVALID (NULL argument, a cache of another
 * rewrite set); CLF_E_STATE (the body has started). The cache must
 * outlive the body. */
CLF_API clf_status clf_rewriter_use_cache(clf_rewriter *rw, clf_rewrite_cache *cache,
                                          const void *key, size_t klen);

/* The cache's counters since it was made. */
typedef struct clf_rewrite_cache_stats {
    uint64_t hits, misses, stores, evictions;
} clf_rewrite_cache_stats;
CLF_API clf_status clf_rewrite_cache_stats_get(clf_rewrite_cache *c,
                                               clf_rewrite_cache_stats *out);

#ifdef __cplusplus
}
#endif
#endif /* CLASSIFY_H */
