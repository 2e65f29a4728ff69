// Every byte a command prints on std::cout passes through NeutralizeControls
// (newlines and tabs kept). Text outputs quote what came from outside (NCCL
// log lines, hostnames, agents' errors, manifest values, a bundle's fields),
// and an ESC sequence among them would recolour, move the cursor or retitle
// the terminal of whoever reads the output. JSON stays valid and equal: the
// only characters changed in it (C1 controls, bidi overrides) become JSON
// escapes of themselves.
//
// Complete lines go through at once, so nothing waits for the exit and the
// order with other writes to stdout is kept; a partial line goes at the next
// flush (std::flush, std::endl) or at exit.
#pragma once

namespace fabcheck {

// Installs the filter on std::cout for the rest of the process (once; later
// calls do nothing).
void GuardStdout();

}  // namespace fabcheck
