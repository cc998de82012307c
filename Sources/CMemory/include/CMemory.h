#ifndef LOUPE_CMEMORY_H
#define LOUPE_CMEMORY_H

/// Gives the memory a load freed back to the system (glibc's `malloc_trim`, which Swift's Glibc
/// module does not export). A load builds its columns in pieces and frees the pieces; glibc keeps
/// freed heap pages for later allocations unless asked, and a browsing session would hold them
/// for its whole life. Returns 1 when memory was given back.
int loupe_release_free_memory(void);

#endif
