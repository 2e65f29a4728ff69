// One option vocabulary: a name means one thing with one kind of value in
// every command, every example in every --help parses, renamed options keep
// their old spelling for a release, and a mistyped option gets a suggestion.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Outcome {
  int code = -1;
  std::string out;  // stdout and stderr together
};

Outcome Shell(const std::string& command) {
  Outcome r;
  FILE* p = ::popen((command + " 2>&1 </dev/null").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

Outcome Fabcheck(const std::string& args) { return Shell(std::string(FABCHECK_BINARY) + " " + args); }

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The kind of value a tunables row takes, from its type column.
std::string Kind(const std::string& type) {
  for (const char* k : {"flag", "integer", "number", "duration", "port", "path"}) {
    if (type.rfind(k, 0) == 0) return k;
  }
  if (type.find("repeatable") != std::string::npos) return "list";
  return "text";
}

struct Row {
  std::string command, type;
};

// name -> where it is declared, from `fabcheck tunables --markdown`.
std::map<std::string, std::vector<Row>> OptionTable() {
  std::map<std::string, std::vector<Row>> table;
  Outcome r = Fabcheck("tunables --markdown");
  EXPECT_EQ(r.code, 0) << r.out;
  std::string command;
  for (const std::string& line : Lines(r.out)) {
    if (line.rfind("## Renamed options", 0) == 0) break;
    if (line.rfind("## fabcheck ", 0) == 0) command = line.substr(12);
    if (line.rfind("| `-", 0) != 0) continue;
    size_t names_end = line.find("` |");
    std::string names = line.substr(3, names_end - 3);
    size_t type_start = names_end + 4;
    std::string type = line.substr(type_start, line.find(" |", type_start) - type_start);
    std::stringstream split(names);
    for (std::string name; std::getline(split, name, ',');) {
      while (!name.empty() && name[0] == ' ') name.erase(0, 1);
      table[name].push_back({command, type});
    }
  }
  return table;
}

TEST(Options, OneNameOneKindOfValueEverywhere) {
  auto table = OptionTable();
  ASSERT_GT(table.size(), 50u);
  for (const auto& [name, rows] : table) {
    std::set<std::string> kinds;
    std::string where;
    for (const auto& row : rows) {
      kinds.insert(Kind(row.type));
      where += "\n  fabcheck " + row.command + " " + name + ": " + row.type;
    }
    EXPECT_EQ(kinds.size(), 1u) << name << " takes different kinds of value:" << where;
  }
  // The meanings the issue found split are apart now.
  for (const auto& row : table["--profile"]) EXPECT_EQ(Kind(row.type), "path") << row.command;
  EXPECT_EQ(table.count("--platform"), 1u);
  EXPECT_EQ(table.count("--cluster-profile"), 1u);
  for (const auto& row : table["-o"]) EXPECT_EQ(Kind(row.type), "path") << row.command;
  EXPECT_EQ(table.count("--out"), 0u) << "-o/--output is the one spelling of where a command writes";
}

// Every command path with options: "ladder", "perf run", "k8s lint"...
std::vector<std::string> CommandPaths() {
  std::set<std::string> paths;
  for (const auto& [name, rows] : OptionTable()) {
    for (const auto& row : rows) paths.insert(row.command);
  }
  Outcome top = Fabcheck("--help");
  bool in_commands = false;
  for (const std::string& line : Lines(top.out)) {
    if (line.rfind("SUBCOMMANDS", 0) == 0) in_commands = true;
    else if (in_commands && line.size() > 2 && line[0] == ' ' && line[2] != ' ') {
      std::stringstream words(line);
      std::string word;
      words >> word;
      paths.insert(word);
    }
  }
  return {paths.begin(), paths.end()};
}

// "fabcheck ladder --agents a,b -o x  # comment" -> "ladder --agents a,b -o x":
// cut at the first comment, pipe, redirection, `&&`, `;` or backtick outside
// quotes. A command substitution "$(...)" becomes the word VALUE: the example
// is parsed, never its substitutions run.
std::string CommandOfExample(const std::string& text) {
  std::string out;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '$' && i + 1 < text.size() && text[i + 1] == '(') {
      int depth = 0;
      size_t j = i + 1;
      for (; j < text.size(); ++j) {
        if (text[j] == '(') ++depth;
        if (text[j] == ')' && --depth == 0) break;
      }
      out += "VALUE";
      i = j;
      continue;
    }
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '#' && (i == 0 || text[i - 1] == ' ')) {
      break;
    } else if (c == '|' || c == '>' || c == ';' || c == '`' || (c == '&' && i + 1 < text.size() && text[i + 1] == '&')) {
      break;
    }
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

TEST(Options, EveryHelpExampleParses) {
  const auto paths = CommandPaths();
  std::set<std::string> top;
  for (const auto& p : paths) top.insert(p.substr(0, p.find(' ')));
  const std::regex invocation(R"((^|[\s(:"])fabcheck ([a-z][a-z0-9-]*)( |$))");
  int examples = 0;
  std::string failures;
  for (const std::string& path : paths) {
    Outcome help = Fabcheck(path + " --help");
    ASSERT_EQ(help.code, 0) << path << "\n" << help.out;
    auto lines = Lines(help.out);
    for (size_t i = 0; i < lines.size(); ++i) {
      std::string line = lines[i];
      if (line.find("Usage:") != std::string::npos) continue;
      std::smatch m;
      if (!std::regex_search(line, m, invocation) || !top.count(m[2].str())) continue;
      std::string text = line.substr(m.position(0) + m[1].length() + std::string("fabcheck ").size());
      while (!text.empty() && text.back() == '\\' && i + 1 < lines.size()) {  // continued on the next line
        text.pop_back();
        text += " " + lines[++i];
      }
      const std::string args = CommandOfExample(text);
      Outcome parsed = Fabcheck("--parse-only " + args);
      ++examples;
      if (parsed.code != 0) {
        failures += "\n  fabcheck " + path + " --help: `fabcheck " + args + "` -> exit " +
                    std::to_string(parsed.code) + ": " + parsed.out;
      }
      if (parsed.out.find("deprecated") != std::string::npos) {
        failures += "\n  fabcheck " + path + " --help shows an old spelling: `fabcheck " + args + "`";
      }
    }
  }
  EXPECT_GT(examples, 60);
  EXPECT_TRUE(failures.empty()) << "examples that do not parse:" << failures;
}

TEST(Options, OldSpellingsWorkForOneReleaseWithADeprecationLine) {
  struct Case {
    const char* old_line;
    const char* new_name;
  };
  for (const Case& c : {Case{"ladder --agents a,b --out run.tar.gz", "--output"},
                        Case{"ladder --agents a,b --out=run.tar.gz", "--output"},
                        Case{"sweep --agents a,b --rails", "--all-rails"},
                        Case{"kv run --agents a,b --fan-out", "--direction fan-out"},
                        Case{"fabric --check fabric.yaml", "--check-file"},
                        Case{"k8s lint - --profile gke", "--platform"},
                        Case{"k8s render --profile p.yaml", "--cluster-profile"}}) {
    Outcome r = Fabcheck(std::string("--parse-only ") + c.old_line);
    EXPECT_EQ(r.code, 0) << c.old_line << "\n" << r.out;
    EXPECT_NE(r.out.find(std::string("deprecated and goes in the next release; use ") + c.new_name),
              std::string::npos)
        << c.old_line << "\n" << r.out;
  }
  // The same word is not rewritten where it is current: doctor's --profile is the hardware profile.
  Outcome doctor = Fabcheck("--parse-only doctor --profile p.yaml");
  EXPECT_EQ(doctor.code, 0) << doctor.out;
  EXPECT_EQ(doctor.out.find("deprecated"), std::string::npos) << doctor.out;
  // A value is checked under its new name.
  Outcome bad = Fabcheck("--parse-only kv run --agents a,b --direction sideways");
  EXPECT_EQ(bad.code, 64) << bad.out;
}

TEST(Options, AMistypedOptionGetsASuggestion) {
  Outcome r = Fabcheck("inventory --jsn");
  EXPECT_EQ(r.code, 64) << r.out;
  EXPECT_NE(r.out.find("did you mean '--json'?"), std::string::npos) << r.out;
  Outcome ladder = Fabcheck("ladder --agent a,b");
  EXPECT_NE(ladder.out.find("did you mean '--agents'?"), std::string::npos) << ladder.out;
  Outcome far = Fabcheck("inventory --completely-different");
  EXPECT_EQ(far.out.find("did you mean"), std::string::npos) << far.out;
}

TEST(Options, DurationsTakeUnitsAndCountsTheEnginesBound) {
  // `perf run --timeout 5s` was refused while `--duration 30s` was taken.
  for (const char* line : {"perf run host --timeout 5s", "perf run host --timeout 2.5", "perf serve --timeout 500ms",
                           "coll --timeout 2m", "kv run host --timeout 10s"}) {
    Outcome r = Fabcheck(std::string("--parse-only ") + line);
    EXPECT_EQ(r.code, 0) << line << "\n" << r.out;
  }
  Outcome zero = Fabcheck("--parse-only perf run host --timeout 0s");
  EXPECT_EQ(zero.code, 64) << zero.out;
  // --streams passed the parser up to 4096 and failed in the engine above 1024.
  EXPECT_EQ(Fabcheck("--parse-only perf run host --streams 1024").code, 0);
  Outcome many = Fabcheck("--parse-only perf run host --streams 1025");
  EXPECT_EQ(many.code, 64) << many.out;
  EXPECT_NE(many.out.find("1..1024"), std::string::npos) << many.out;
}

}  // namespace
