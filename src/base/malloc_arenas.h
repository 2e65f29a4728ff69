// Memory of long-running fabcheck servers (agent, exporter, perf serve).
#pragma once

namespace fabcheck::base {

// glibc gives every thread that allocates its own malloc arena (up to 8 per
// core) and keeps each arena's freed memory for reuse. A server whose
// requests run on many short-lived or pooled threads then grows its resident
// size with every thread that ever served a request, though nothing leaks
// (the exporter: +9% over 3,000 scrapes; the agent under the 10-minute soak:
// 30 -> 56 MiB while its heap in use stayed under 16 MiB, heaptrack). Two
// arenas keep it flatter; the servers' hot paths allocate little. Call
// before any thread starts.
void LimitMallocArenas();

// Returns the freed memory the allocator keeps to the kernel (malloc_trim):
// after a heavy request, so a server's resident size follows what it uses,
// not its busiest moment. Costs a walk over the arenas: once per heavy
// request, not per small one.
void ReturnFreedMemory();

}  // namespace fabcheck::base
