/*
 * format.h: the layout of a rules file (`rules.bin`). docs/format.md
 * describes it for people; this is the definition for the code.
 *
 * All integers are little-endian. The file is:
 *
 *   offset 0   magic        8 bytes  "\x89CLF\r\n\x1a\n"
 *          8   version      u32      VM_FORMAT_VERSION
 *         12   nsections    u32      VM_SEC_COUNT
 *         16   file size    u64      whole file, checksum included
 *         24   section table         nsections x {u32 id, u32 0, u64 offset, u64 size}
 *              sections              each 8-byte aligned, inside the file
 *   size - 8   checksum     u64      XXH3-64 (seed 0) of bytes [0, size - 8)
 *
 * The function table's entry is VM_NO_ENTRY in a file without `main`
 * (rewrite sets only, program.h).
 *
 * Like PNG's signature, the magic's high-bit byte, CR LF, ^Z and LF catch
 * 7-bit transfers, newline translation and DOS-style truncation.
 */
#ifndef VM_FORMAT_H
#define VM_FORMAT_H

#define VM_MAGIC "\x89" "CLF\r\n\x1a\n"
#define VM_MAGIC_LEN 8
#define VM_FORMAT_VERSION 6u /* 2: Hyperscan ids are pattern indices;
                                3: calls, ip sets, captures;
                                4: patterns record their method; function
                                   flags (entry filters);
                                5: rewrite sets (section 12), int sets
                                   (13); main optional;
                                6: state slots (14) and the state
                                   opcodes (count, score, mark), ip.net;
                                   the matcher section (15): which
                                   library built the databases */
#define VM_HEADER_LEN 24
#define VM_SECENTRY_LEN 24
#define VM_TRAILER_LEN 8

/* Section ids, in file order. Each appears exactly once. */
enum vm_section {
    VM_SEC_CONST = 1,  /* u32 n; n x {u32 kind, u32 len, u64 value}; string bytes.
                          STR: value = offset of the bytes after the table,
                          each followed by a NUL. INT: value = the integer. */
    VM_SEC_FUNC = 2,   /* u32 n, u32 entry; n x {u32 name, u32 nregs, u32 ninsns,
                          u8 kind, u8 nparams, u8 ret, u8 flags} */
    VM_SEC_CODE = 3,   /* the functions' instructions, concatenated, 8 bytes each */
    VM_SEC_TYPES = 4,  /* the functions' register types, concatenated, 1 byte each */
    VM_SEC_POS = 5,    /* per instruction {u32 file, u32 line, u32 col} */
    VM_SEC_HDRS = 6,   /* u32 n; n x u32 string constant */
    VM_SEC_SUBJ = 7,   /* u32 n; n x {u32 kind, u32 hdr, u32 ntests, u32 0} */
    VM_SEC_PAT = 8,    /* u32 n; n x {u32 subject, u32 test, u32 kind, u32 flags,
                          u32 value, u32 0}: kind a vm_pattern_kind, value
                          the literal or regex (a string constant).
                          A pattern's Hyperscan id is its index among its
                          subject's patterns, in this order. */
    VM_SEC_HSDB = 9,   /* n (= subjects) x {u64 offset, u64 size} from the
                          section start; then the hs_serialize_database blobs */
    VM_SEC_IPSET = 10, /* u32 nsets, u32 nranges; nsets x {u32 first, u32 count};
                          nranges x {16 bytes low, 16 bytes high} */
    VM_SEC_CAPT = 11,  /* u32 n, u32 0; n x {u32 subject, u32 test, u32 flags,
                          u32 expr, u32 group, u32 0} */
    VM_SEC_REWRITE = 12, /* u32 n, u32 0; n x {u32 name, u32 0, u64 offset, u64 size}
                          from the section start; then each rewrite set's stored
                          form (rewrite/rw_store.c), 8-aligned */
    VM_SEC_INTSET = 13, /* u32 nsets, u32 nvalues; nsets x {u32 first, u32 count};
                          nvalues x i64, each set's strictly increasing */
    VM_SEC_STATE = 14, /* u32 n, u32 0; n x {u32 kind, u32 keytype, u32 name,
                          u32 param, i64 amount}: the state slots (program.h,
                          vm_slot; bounds in vm/store.h) */
    VM_SEC_MATCHER = 15, /* u32 library, u32 version: the libhs that built the
                          databases of sections 9 and 12 (vm/matcher.h:
                          1 Hyperscan, 2 Vectorscan; version major << 16 |
                          minor << 8 | patch). The loader rebuilds them from
                          the patterns unless both are this process's. */
    VM_SEC_COUNT = 15
};

/* The most rewrite sets one file may hold (the compiler refuses more). */
#define VM_MAX_REWRITE_SETS 1024u

#endif
