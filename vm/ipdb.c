/* ipdb.c: see ipdb.h; the public clf_ipdb_* calls are here too. */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <maxminddb.h>

#include "ipdb.h"
#include "program.h"

struct clf_ipdb {
    MMDB_s mmdb;
};

CLF_API clf_status clf_ipdb_open(const char *path, clf_ipdb **out, char *err, size_t errlen)
{
    if (err && errlen) err[0] = 0;
    if (!path || !out) {
        vm_errf(err, errlen, "NULL path or output");
        return CLF_E_INVALID;
    }
    *out = NULL;
    clf_ipdb *db = calloc(1, sizeof *db);
    if (!db) {
        vm_errf(err, errlen, "out of memory");
        return CLF_E_NOMEM;
    }
    int rc = MMDB_open(path, MMDB_MODE_MMAP, &db->mmdb);
    if (rc != MMDB_SUCCESS) {
        clf_status st = rc == MMDB_OUT_OF_MEMORY_ERROR ? CLF_E_NOMEM
                        : rc == MMDB_FILE_OPEN_ERROR || rc == MMDB_IO_ERROR ? CLF_E_IO
                                                                           : CLF_E_FORMAT;
        if (rc == MMDB_IO_ERROR || rc == MMDB_FILE_OPEN_ERROR)
            vm_errf(err, errlen, "%s: %s%s%s", path, MMDB_strerror(rc), errno ? ": " : "",
                    errno ? strerror(errno) : "");
        else
            vm_errf(err, errlen, "%s: not a MaxMind database: %s", path, MMDB_strerror(rc));
        free(db);
        return st;
    }
    *out = db;
    return CLF_OK;
}

CLF_API void clf_ipdb_close(clf_ipdb *db)
{
    if (!db) return;
    MMDB_close(&db->mmdb);
    free(db);
}

CLF_API const char *clf_ipdb_type(const clf_ipdb *db)
{
    return db && db->mmdb.metadata.database_type ? db->mmdb.metadata.database_type : "";
}

/* A string value of the entry at `path`, or NULL. */
static const char *string_at(MMDB_entry_s *e, uint32_t *len, const char *const *path)
{
    MMDB_entry_data_s d;
    if (MMDB_aget_value(e, &d, path) != MMDB_SUCCESS || !d.has_data ||
        d.type != MMDB_DATA_TYPE_UTF8_STRING)
        return NULL;
    *len = d.data_size;
    return d.utf8_string;
}

void vm_ipdb_lookup(const clf_ipdb *const *dbs, unsigned n, const uint8_t addr[16],
                    vm_ipinfo *out)
{
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    static const char *const asn_path[] = {"autonomous_system_number", NULL};
    static const char *const org_path[] = {"autonomous_system_organization", NULL};
    static const char *const cc_path[] = {"country", "iso_code", NULL};
    out->asn = 0;
    out->org = out->country = "";
    out->org_len = out->country_len = 0;
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
    const struct sockaddr *sa;
    if (memcmp(addr, mapped, 12) == 0) {
        memset(&v4, 0, sizeof v4);
        v4.sin_family = AF_INET;
        memcpy(&v4.sin_addr, addr + 12, 4);
        sa = (const struct sockaddr *)&v4;
    } else {
        memset(&v6, 0, sizeof v6);
        v6.sin6_family = AF_INET6;
        memcpy(&v6.sin6_addr, addr, 16);
        sa = (const struct sockaddr *)&v6;
    }
    int have_asn = 0, have_org = 0, have_cc = 0;
    for (unsigned i = 0; i < n && !(have_asn && have_org && have_cc); i++) {
        int mmdb_error = 0;
        MMDB_lookup_result_s r = MMDB_lookup_sockaddr(&dbs[i]->mmdb, sa, &mmdb_error);
        if (mmdb_error != MMDB_SUCCESS || !r.found_entry) continue;
        MMDB_entry_data_s d;
        if (!have_asn && MMDB_aget_value(&r.entry, &d, asn_path) == MMDB_SUCCESS && d.has_data &&
            d.type == MMDB_DATA_TYPE_UINT32) {
            out->asn = d.uint32;
            have_asn = 1;
        }
        const char *s;
        uint32_t len;
        if (!have_org && (s = string_at(&r.entry, &len, org_path))) {
            out->org = s;
            out->org_len = len;
            have_org = 1;
        }
        if (!have_cc && (s = string_at(&r.entry, &len, cc_path))) {
            out->country = s;
            out->country_len = len;
            have_cc = 1;
        }
    }
}
