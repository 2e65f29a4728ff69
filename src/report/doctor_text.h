// `fabcheck doctor` for people: findings grouped by rung, evidence and fix for
// what is not a pass (for everything with `verbose`), and the counts.
#pragma once

#include <string>

#include "fabcheck/model/doctor.h"

namespace fabcheck::report {

std::string RenderDoctorText(const model::DoctorReport& report, bool verbose);

}  // namespace fabcheck::report
