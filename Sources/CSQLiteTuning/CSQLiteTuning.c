#include "CSQLiteTuning.h"
#include <sqlite3.h>

int loupe_sqlite_configure(void) {
    int rc = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    int uri = sqlite3_config(SQLITE_CONFIG_URI, 1);
    return rc != SQLITE_OK ? rc : uri;
}
