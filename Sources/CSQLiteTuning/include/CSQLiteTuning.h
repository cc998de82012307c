#ifndef LOUPE_CSQLITETUNING_H
#define LOUPE_CSQLITETUNING_H

/// Process-wide SQLite settings that GRDB does not expose, through `sqlite3_config`, which is
/// variadic and so cannot be called from Swift: hence this one wrapper. It must run before SQLite
/// initialises (before the first connection); afterwards SQLite ignores it.
///
/// - Memory statistics off. With them on, every allocation takes one global mutex, and Loupe's
///   parallel readers (which allocate for every JSON value) spend much of a large load waiting for
///   each other: loading a million Persist objects took 4.2–5.0 s with them and 2.6–3.5 s without.
/// - URI file names on (whatever the build's default), so that Loupe can open WAL files with
///   `mode=ro&readonly_shm=1` and read them without writing to the file or its sidecars.
///
/// Returns SQLite's result code of the first setting that failed, else 0.
int loupe_sqlite_configure(void);

struct sqlite3;

/// Adds the SQL function `loupe_reads_back(x)` to connection `db`: 1 unless `x` is text whose
/// bytes do not read back as a string (not UTF-8 — SQLite hands such bytes over repaired — or
/// holding a NUL, at which the text is cut short), then 0. In C rather than as a GRDB function
/// because a check of a table's key runs once per row over millions of rows: at C speed it
/// costs about what SQLite's `length()` does. `encoding` is the database's (SQLITE_UTF8, 2 for
/// SQLITE_UTF16LE, 3 for SQLITE_UTF16BE): a text's stored bytes are checked in it (UTF-16 with
/// every surrogate paired and no NUL). Returns SQLite's result code.
int loupe_sqlite_add_reads_back(struct sqlite3 *db, int encoding);

/// Makes connection `db` read a store's own schema as SQLite's shell does, for reading only:
///
/// - double-quoted string literals accepted (`SQLITE_DBCONFIG_DQS_DDL` and `_DML`, as the shell
///   does): apps ship views written for SQLite's legacy `"|"`-as-a-string, which GRDB's default
///   refuses, and SQLite resolves a view's body within the statement that reads it. (Loupe's own
///   SQL names only columns it read from the schema, and spells strings with single quotes;
///   connections that write keep GRDB's strict rule.)
/// - a collation the file names but only its app registers (`COLLATE LOCALIZED`) emulated when
///   SQLite first needs it (`sqlite3_collation_needed`): as SQLite's NOCASE when its name says
///   it folds case (``loupe_sqlite_collation_folds_case``), else as BINARY. Without it every read
///   of a table whose key or index uses it fails ("no such collation sequence").
///
/// Never for a connection that writes: an index kept in another collation's order would be
/// corrupted by a write through an emulation. Returns SQLite's result code.
int loupe_sqlite_read_as_written(struct sqlite3 *db);

/// 1 when an app's collation `name` is emulated as NOCASE (its name says it folds case:
/// NOCASE, CASE…, LOCALIZED, UNICODE, ICU), 0 when as BINARY.
int loupe_sqlite_collation_folds_case(const char *name);

#endif
