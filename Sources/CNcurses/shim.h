#define NCURSES_WIDECHAR 1
#include <ncurses.h>
