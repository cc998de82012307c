// What must still happen when the process dies of a signal: the terminal given back, private
// temporary files removed. Only async-signal-safe calls run in the handler (write, tcsetattr,
// unlink, rmdir, sigaction, raise), on an alternate stack so a stack overflow is handled too.
// Swift cannot write such a handler (it may allocate, take locks, or run the runtime), so it is C.
#ifndef CSIGNALSAFETY_H
#define CSIGNALSAFETY_H

// Installs the handler for SIGINT, SIGTERM, SIGHUP, SIGQUIT and the fatal signals (SIGSEGV,
// SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP) once, and the same work at exit(); later calls do
// nothing. After its work the handler lets the signal end the process as it would have: a fault
// goes on to the previous handler (Swift's crash report), a signal sent by another process gets
// the default action.
void loupe_signals_install(void);

// Remembers a file or (empty) folder to remove if the process dies; returns a slot, or -1 when
// the table is full or the path too long. Folders are removed after files.
int loupe_cleanup_add(const char *path, int isFolder);
// Forgets a slot (the owner removed the path itself).
void loupe_cleanup_remove(int slot);

// Remembers a statement to cancel if the process dies or exits: `cancel(context, buffer, size)`
// is called from the handler (and at exit), and must be async-signal-safe, as libpq's PQcancel
// is. Returns a slot, or -1 when the table is full. A PostgreSQL server would otherwise go on
// running a statement for a client that is gone.
int loupe_cancel_add(int (*cancel)(void *context, char *buffer, int size), void *context);
// Forgets a slot (the connection was closed).
void loupe_cancel_remove(int slot);

// Saves the terminal state of `fd` (tcgetattr) and the text that resets a full-screen program's
// modes, to be restored if the process dies while the browser owns the terminal.
void loupe_terminal_save(int fd, const char *reset);
// The browser gave the terminal back itself: nothing to restore any more.
void loupe_terminal_forget(void);

// For tests: runs the handler's work (terminal restore and cleanup) without a signal.
void loupe_signals_run_cleanup(void);

#endif
