// fabcheck's catalogue of NCCL's WARN messages (data/nccl-messages/, compiled
// in): every WARN format of NCCL 2.5 to 2.30 with the family it belongs to,
// and per family its subsystem, cause families, fix and the next fabcheck
// command. Recognising a message is matching it against the formats; the
// source file NCCL prints before "NCCL WARN" (transport/nvls.cc:376) refines
// the family (a CUDA failure raised while setting up NVLS is an NVLS failure).
#pragma once

#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace fabcheck::logs {

struct NcclMessageFamily {
  std::string id;         // "net-ib.completion-error"
  std::string subsystem;  // "net/ib", "socket", "bootstrap", "plugin", "proxy", "transport", "init", ...
  std::string title;
  std::vector<std::string> causes;  // most likely first
  std::string fix;
  std::string next;
  bool specific = true;  // false: says where, not why (internal consistency checks)
};

struct NcclMessageFormat {
  std::string format;     // NCCL's format, as printed with printf conversions
  std::string family;     // family id
  std::string subsystem;  // of the source file that prints it
  std::string file;       // "transport/net_ib/p2p.cc" (relative to NCCL's src/)
  std::string first_release, last_release;  // "v2.5.7-1" .. "v2.30.7-1"
  int sites_at_newest = 0;  // WARN call sites in the newest release (0: no longer printed)
};

struct NcclMessageMatch {
  const NcclMessageFamily* family = nullptr;  // nullptr: not in the catalogue
  const NcclMessageFormat* format = nullptr;
};

class NcclMessageCatalog {
 public:
  // The compiled-in catalogue.
  static const NcclMessageCatalog& Get();

  // The family of one WARN message (the text after "NCCL WARN "); `source` is
  // the "file.cc:line" NCCL printed before it ("" when the line had none).
  NcclMessageMatch Classify(std::string_view message, std::string_view source = "") const;

  const std::vector<NcclMessageFamily>& families() const { return families_; }
  const std::vector<NcclMessageFormat>& formats() const { return formats_; }
  const NcclMessageFamily* Family(std::string_view id) const;
  const std::string& extracted_from() const { return extracted_from_; }

  // WARN call sites of the newest release per subsystem: how many there are,
  // how many a line generated from their format is recognised for (a family
  // of the catalogue), and how many of those name a cause (a specific family).
  struct Coverage {
    std::string subsystem;
    int sites = 0, recognised = 0, specific = 0;
  };
  std::vector<Coverage> CoverageAtNewest() const;

  // A message NCCL would print for `format` (conversions filled with sample values).
  static std::string SampleLine(std::string_view format);

 private:
  NcclMessageCatalog();
  struct Matcher {
    std::vector<std::string> pieces;  // literal text between conversions
    bool anchored = false;            // the format starts with literal text
    size_t literal = 0;               // total literal length (more is more specific)
  };
  std::vector<NcclMessageFamily> families_;
  std::vector<NcclMessageFormat> formats_;
  std::vector<Matcher> matchers_;
  std::vector<const NcclMessageFamily*> family_of_;  // per format; nullptr: "<subsystem>.other"
  struct Refine {
    std::string from, to;
    std::regex source_pattern;
  };
  std::vector<Refine> refines_;
  std::string extracted_from_;
};

}  // namespace fabcheck::logs
