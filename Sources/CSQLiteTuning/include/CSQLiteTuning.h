#ifndef LOUPE_CSQLITETUNING_H
#define LOUPE_CSQLITETUNING_H

/// Turns off SQLite's memory statistics for the whole process. With them on, every allocation
/// takes one global mutex, and Loupe's parallel readers (which allocate for every JSON value)
/// spend much of a large load waiting for each other: loading a million Persist objects took
/// 4.2–5.0 s with them and 2.6–3.5 s without (same run, same file). GRDB does not expose this, and
/// `sqlite3_config` is variadic, which Swift cannot call: hence this one wrapper. It must run
/// before SQLite initialises (before the first connection); afterwards it does nothing.
/// Returns SQLite's result code.
int loupe_sqlite_disable_memory_statistics(void);

#endif
