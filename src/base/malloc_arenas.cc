#include "base/malloc_arenas.h"

#include <malloc.h>

namespace fabcheck::base {

void LimitMallocArenas() { ::mallopt(M_ARENA_MAX, 2); }

void ReturnFreedMemory() { ::malloc_trim(0); }

}  // namespace fabcheck::base
