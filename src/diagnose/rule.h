// One diagnose rule: a stable ID, catalog text (docs/diagnose.md), and a
// function from evidence to diagnoses. One rule per file under rules/;
// registry.cc lists them (an explicit list: static linking would drop
// self-registering files).
//
// Rules every rule follows:
//  - Evidence names the file and line, or the counter, its delta and interval.
//  - Causes are ranked: the most likely first, with what would tell them apart.
//  - `next` names the rung or the fabcheck command to run, with the members
//    (hosts, devices, GIDs) filled in from the evidence.
//  - No input of its kind: the rule says nothing (diagnose is not a checklist).
#pragma once

#include <string>
#include <vector>

#include "diagnose/evidence.h"
#include "fabcheck/model/diagnose.h"

namespace fabcheck::diagnose {

struct Rule {
  const char* id;     // "nccl.ib.wc-error"
  const char* group;  // "NCCL", "counters", "perf", "input"
  const char* title;  // fires when ...
  const char* why;    // why it matters
  const char* fix;    // how to fix it (diagnoses carry the specific one)
  void (*run)(const Evidence& evidence, std::vector<model::Diagnosis>* out);
};

// A diagnosis of `rule` with its group filled in.
model::Diagnosis Make(const Rule& rule, model::Severity severity, model::Confidence confidence, std::string object,
                      std::string message);

}  // namespace fabcheck::diagnose
