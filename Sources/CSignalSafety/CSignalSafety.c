#include "CSignalSafety.h"
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#define SLOTS 64
#define PATH_BYTES 1024

static char paths[SLOTS][PATH_BYTES];
static volatile sig_atomic_t kinds[SLOTS];   // 0 free, 1 file, 2 folder

static struct termios savedTerminal;
static volatile sig_atomic_t terminalSaved = 0;
static int terminalFD = -1;
static char resetText[256];
static size_t resetLength = 0;

static const int handled[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP };
#define HANDLED (sizeof(handled) / sizeof(handled[0]))
static struct sigaction previous[HANDLED];
static int installed = 0;

#define CANCELS 32
static int (*volatile cancels[CANCELS])(void *, char *, int);
static void *volatile cancelContexts[CANCELS];

static void runCleanup(void) {
    for (int i = 0; i < CANCELS; i++) {
        int (*cancel)(void *, char *, int) = cancels[i];
        if (!cancel) continue;
        char buffer[256];
        cancel(cancelContexts[i], buffer, (int)sizeof buffer);
    }
    if (terminalSaved) {
        terminalSaved = 0;
        if (resetLength > 0) { ssize_t ignored = write(terminalFD, resetText, resetLength); (void)ignored; }
        tcsetattr(terminalFD, TCSAFLUSH, &savedTerminal);
    }
    for (int pass = 1; pass <= 2; pass++) {
        for (int i = 0; i < SLOTS; i++) {
            if (kinds[i] != pass) continue;
            if (pass == 1) unlink(paths[i]); else rmdir(paths[i]);
            kinds[i] = 0;
        }
    }
}

static void handler(int sig, siginfo_t *info, void *context) {
    (void)context;
    runCleanup();
    // A fault the kernel raised (a bad pointer, a trap): the previous handler (Swift's crash
    // reporter) gets it when the faulting instruction runs again. A signal another process sent
    // (kill) would not come again, and a crash reporter returns from it: the default action
    // then ends the process as that signal should.
    // Only the synchronous faults come again: a hang-up or Ctrl-C the kernel sends (si_code
    // SI_KERNEL) must end the process now, like a kill.
    int isFault = sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGTRAP;
    int fromKernel = isFault && info != NULL && info->si_code > 0;
    for (unsigned i = 0; i < HANDLED; i++) {
        if (handled[i] != sig) continue;
        if (fromKernel) {
            sigaction(sig, &previous[i], NULL);
        } else {
            struct sigaction fallback;
            memset(&fallback, 0, sizeof fallback);
            fallback.sa_handler = SIG_DFL;
            sigemptyset(&fallback.sa_mask);
            sigaction(sig, &fallback, NULL);
        }
        break;
    }
    if (!fromKernel) raise(sig);   // delivered once this returns
}

static void cleanupAtExit(void) { runCleanup(); }

void loupe_signals_install(void) {
    if (installed) return;
    installed = 1;
    atexit(cleanupAtExit);   // exit() runs no deinitializers: private copies go here too
    // An alternate stack, so that a stack overflow can still be handled on this thread.
    static char *alternate = NULL;
    size_t size = 256 * 1024;
    alternate = malloc(size);
    if (alternate) {
        stack_t ss;
        memset(&ss, 0, sizeof ss);
        ss.ss_sp = alternate;
        ss.ss_size = size;
        sigaltstack(&ss, NULL);
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_ONSTACK | SA_SIGINFO;
    for (unsigned i = 0; i < HANDLED; i++) sigaction(handled[i], &action, &previous[i]);
}

int loupe_cleanup_add(const char *path, int isFolder) {
    size_t n = strlen(path);
    if (n + 1 > PATH_BYTES) return -1;
    for (int i = 0; i < SLOTS; i++) {
        if (kinds[i] == 0) {
            memcpy(paths[i], path, n + 1);
            kinds[i] = isFolder ? 2 : 1;
            return i;
        }
    }
    return -1;
}

void loupe_cleanup_remove(int slot) {
    if (slot >= 0 && slot < SLOTS) kinds[slot] = 0;
}

int loupe_cancel_add(int (*cancel)(void *context, char *buffer, int size), void *context) {
    for (int i = 0; i < CANCELS; i++) {
        if (cancels[i] == 0) {
            cancelContexts[i] = context;
            cancels[i] = cancel;
            return i;
        }
    }
    return -1;
}

void loupe_cancel_remove(int slot) {
    if (slot >= 0 && slot < CANCELS) { cancels[slot] = 0; cancelContexts[slot] = 0; }
}

void loupe_terminal_save(int fd, const char *reset) {
    if (tcgetattr(fd, &savedTerminal) != 0) return;
    terminalFD = fd;
    size_t n = strlen(reset);
    if (n >= sizeof resetText) n = sizeof resetText - 1;
    memcpy(resetText, reset, n);
    resetText[n] = 0;
    resetLength = n;
    terminalSaved = 1;
}

void loupe_terminal_forget(void) { terminalSaved = 0; }

void loupe_signals_run_cleanup(void) { runCleanup(); }
