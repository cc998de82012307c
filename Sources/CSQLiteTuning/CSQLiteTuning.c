#include "CSQLiteTuning.h"
#include <sqlite3.h>
#include <string.h>

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


/* 1 when collation `name` (not SQLite's own) reads as a case-insensitive one: its name says so
   (NOCASE, CASE_INSENSITIVE, LOCALIZED, UNICODE, as Android's and other apps' are named). */
int loupe_sqlite_collation_folds_case(const char *name) {
    static const char *const words[] = { "NOCASE", "CASE", "LOCALIZED", "UNICODE", "ICU" };
    char upper[128];
    size_t n = 0;
    for (; name[n] && n < sizeof upper - 1; n++) upper[n] = (name[n] >= 'a' && name[n] <= 'z') ? name[n] - 32 : name[n];
    upper[n] = 0;
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) if (strstr(upper, words[i])) return 1;
    return 0;
}

/* Bytes in order, ASCII letters folded to lower case first when folds is set (SQLite's NOCASE). */
static int compare_bytes(const unsigned char *a, int na, const unsigned char *b, int nb, int folds) {
    int n = na < nb ? na : nb;
    for (int i = 0; i < n; i++) {
        unsigned char x = a[i], y = b[i];
        if (folds) { if (x >= 'A' && x <= 'Z') x += 32; if (y >= 'A' && y <= 'Z') y += 32; }
        if (x != y) return x < y ? -1 : 1;
    }
    return na == nb ? 0 : (na < nb ? -1 : 1);
}

static int emulated_binary(void *unused, int na, const void *a, int nb, const void *b) {
    (void)unused;
    return compare_bytes(a, na, b, nb, 0);
}

static int emulated_nocase(void *unused, int na, const void *a, int nb, const void *b) {
    (void)unused;
    return compare_bytes(a, na, b, nb, 1);
}

static void collation_needed(void *unused, sqlite3 *db, int encoding, const char *name) {
    (void)unused; (void)encoding;
    sqlite3_create_collation_v2(db, name, SQLITE_UTF8, 0,
                                loupe_sqlite_collation_folds_case(name) ? emulated_nocase : emulated_binary, 0);
}

int loupe_sqlite_read_as_written(struct sqlite3 *db) {
    /* Both: a view's body is resolved as part of the statement that reads it (DML). */
    int rc = sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DDL, 1, (int *)0);
    if (rc == SQLITE_OK) rc = sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, 1, (int *)0);
    if (rc != SQLITE_OK) return rc;
    return sqlite3_collation_needed(db, 0, collation_needed);
}
