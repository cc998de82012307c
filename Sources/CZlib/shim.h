// zlib for Swift: LoupeStore inflates Core Data's raw-DEFLATE model cache with it.
#include <zlib.h>
