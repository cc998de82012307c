// libpq, PostgreSQL's own C client, for LoupePostgres (Debian's libpq-dev; headers under
// /usr/include/postgresql, found through pkg-config).
#include <libpq-fe.h>
