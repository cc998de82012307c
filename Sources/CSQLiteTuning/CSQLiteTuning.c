#include "CSQLiteTuning.h"
#include <sqlite3.h>

int loupe_sqlite_configure(void) {
    int rc = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    int uri = sqlite3_config(SQLITE_CONFIG_URI, 1);
    return rc != SQLITE_OK ? rc : uri;
}

/* 1 when the n bytes at z are UTF-8 with no NUL (Unicode's well-formed sequences: no overlong
   forms, no surrogates, nothing above U+10FFFF), else 0. */
static int reads_back(const unsigned char *z, int n) {
    int i = 0;
    while (i < n) {
        unsigned char c = z[i];
        if (c != 0 && c < 0x80) { i++; continue; }
        if (c == 0) return 0;
        int extra;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) extra = 1;
        else if (c == 0xE0) { extra = 2; lo = 0xA0; }
        else if (c == 0xED) { extra = 2; hi = 0x9F; }
        else if (c >= 0xE1 && c <= 0xEF) extra = 2;
        else if (c == 0xF0) { extra = 3; lo = 0x90; }
        else if (c >= 0xF1 && c <= 0xF3) extra = 3;
        else if (c == 0xF4) { extra = 3; hi = 0x8F; }
        else return 0;
        if (i + extra >= n) return 0;
        if (z[i + 1] < lo || z[i + 1] > hi) return 0;
        for (int k = 2; k <= extra; k++) if (z[i + k] < 0x80 || z[i + k] > 0xBF) return 0;
        i += extra + 1;
    }
    return 1;
}

/* 1 when the n bytes at z are UTF-16 (big-endian when be) with no NUL and every surrogate paired. */
static int reads_back16(const unsigned char *z, int n, int be) {
    if (n % 2) return 0;
    for (int i = 0; i < n; i += 2) {
        unsigned u = be ? (z[i] << 8 | z[i + 1]) : (z[i + 1] << 8 | z[i]);
        if (u == 0) return 0;
        if (u >= 0xDC00 && u <= 0xDFFF) return 0;
        if (u >= 0xD800 && u <= 0xDBFF) {
            if (i + 3 >= n) return 0;
            unsigned next = be ? (z[i + 2] << 8 | z[i + 3]) : (z[i + 3] << 8 | z[i + 2]);
            if (next < 0xDC00 || next > 0xDFFF) return 0;
            i += 2;
        }
    }
    return 1;
}

static void reads_back_function(sqlite3_context *context, int argc, sqlite3_value **argv) {
    (void)argc;
    if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) { sqlite3_result_int(context, 1); return; }
    /* The text's bytes as stored, in the database's encoding (a blob of a text value is never converted). */
    const unsigned char *z = sqlite3_value_blob(argv[0]);
    int n = sqlite3_value_bytes(argv[0]);
    int encoding = (int)(long)sqlite3_user_data(context);
    if (z == 0) { sqlite3_result_int(context, 1); return; }
    sqlite3_result_int(context, encoding == SQLITE_UTF8 ? reads_back(z, n) : reads_back16(z, n, encoding == SQLITE_UTF16BE));
}

int loupe_sqlite_add_reads_back(struct sqlite3 *db, int encoding) {
    return sqlite3_create_function(db, "loupe_reads_back", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, (void *)(long)encoding,
                                   reads_back_function, 0, 0);
}

