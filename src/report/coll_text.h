// The collective results for people: the nccl-tests table (same columns, field
// widths and number formatting, so figures compare line by line) with the
// NCCL log summary of the run (report/nccl_log_text.h), and the GPU copy
// table (`fabcheck gpu`).
#pragma once

#include <cstdint>
#include <string>

#include "fabcheck/model/coll.h"

namespace fabcheck::report {

// nccl-tests' getFloatStr: "%*.2f", falling back to fewer decimals, then %e.
std::string FormatFloatField(double value, int width);

// The nccl-tests table: header, one line per row, "# Out of bounds values" and
// "# Avg bus bandwidth" footer.
std::string FormatCollTableHeader();
std::string FormatCollRow(const model::CollRow& row);
std::string FormatCollFooter(int64_t wrong, double avg_busbw_gbps);

// What `fabcheck coll` prints: ranks, one table per op, expectation, the NCCL
// log summary and the findings.
std::string FormatCollReport(const model::CollReport& report);

// What `fabcheck gpu` prints.
std::string FormatGpuCopyReport(const model::GpuCopyReport& report);

}  // namespace fabcheck::report
