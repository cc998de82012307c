#include "CMemory.h"
#include <malloc.h>

int loupe_release_free_memory(void) {
    return malloc_trim(0);
}
