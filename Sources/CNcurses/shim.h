// The C boundary to ncurses: only what Swift cannot call directly is wrapped here, each wrapper
// saying why. NCURSES_WIDECHAR must come before the include, or the wide-character API
// (get_wch, cchar_t, mvaddwstr) is missing.
#define NCURSES_WIDECHAR 1
#define _XOPEN_SOURCE_EXTENDED 1
#include <locale.h>
#include <stdio.h>
#include <wchar.h>
#include <ncurses.h>

// Mutable C globals are not importable as values Swift can read safely.
static inline WINDOW *loupe_stdscr(void) { return stdscr; }
static inline int loupe_lines(void) { return LINES; }
static inline int loupe_cols(void) { return COLS; }
static inline int loupe_colors(void) { return COLORS; }
static inline FILE *loupe_stdin(void) { return stdin; }
static inline FILE *loupe_stdout(void) { return stdout; }

// Attributes are macros built from NCURSES_BITS, which Swift does not import.
static inline attr_t loupe_a_bold(void) { return A_BOLD; }
static inline attr_t loupe_a_underline(void) { return A_UNDERLINE; }
static inline attr_t loupe_a_reverse(void) { return A_REVERSE; }
static inline attr_t loupe_a_dim(void) { return A_DIM; }
static inline attr_t loupe_a_normal(void) { return A_NORMAL; }

// Mouse masks are macros too.
static inline mmask_t loupe_mouse_mask(void) { return BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED; }
static inline int loupe_mouse_is_press(mmask_t m) { return (m & (BUTTON1_PRESSED | BUTTON1_CLICKED)) != 0; }
static inline int loupe_mouse_is_wheel_up(mmask_t m) { return (m & BUTTON4_PRESSED) != 0; }
static inline int loupe_mouse_is_wheel_down(mmask_t m) { return (m & BUTTON5_PRESSED) != 0; }

// KEY_F(n) is a function-like macro.
static inline int loupe_key_f(int n) { return KEY_F(n); }
