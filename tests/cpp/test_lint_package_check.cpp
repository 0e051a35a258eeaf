// lint/package_check.h: the package analysis and the rules in one call give
// every file what check_source gives it alone with its package roots.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

#include "lint/engine.h"
#include "lint/package_check.h"
#include "semantic/model.h"

namespace {

struct File {
  std::string module;
  bool is_package = false;
  std::string text;
};

const std::vector<File> kPackage = {
    {"pkg", true, "from .model import Net\n"},
    {"pkg.model", false,
     "from torch import nn\n"
     "from .helpers import scale\n"
     "class Net(nn.Module):\n"
     "    def forward(self, x):\n"
     "        print('forward', x.shape)\n"
     "        return scale(x)\n"},
    {"pkg.helpers", false,
     "def scale(x):\n"
     "    print('scaling')\n"
     "    return x * 2\n"
     "def eager(x):\n"
     "    print('never compiled')\n"
     "    return x\n"},
    {"pkg.plain", false, "def f():\n    print('eager only')\n"},
    {"pkg.quiet", false, "x = 1  # graphmend: ignore[GM201]\n"},
    {"pkg.broken", false, "def f(:\n"},
    {"pkg.bad_bytes", false, "x = '\xff'\n"},
};

struct Checked {
  std::vector<std::pair<std::uint32_t, std::string>> diagnostics;  // (begin, code)
  bool syntax_error = false;
};

Checked summary(const gm::lint::CheckResult& r) {
  Checked c;
  c.syntax_error = r.syntax_error.has_value();
  for (const auto& d : r.diagnostics) c.diagnostics.emplace_back(d.begin, d.code);
  return c;
}

// check_source of one file alone, with `roots` as its extra roots.
Checked alone(const std::string& text, const std::vector<std::string>& roots) {
  auto decoded = gm::Source::decode(text);
  const auto& source = std::get<gm::Source>(decoded);
  gm::lint::LintOptions options;
  options.parse.version = {3, 11};
  gm::sema::AnalyzeOptions analysis;
  analysis.extra_roots = roots;
  analysis.facts_need_regions = true;
  options.build_model = [analysis](const gm::Source& s, const gm::ParseResult& parsed) {
    return std::make_shared<const gm::sema::Model>(gm::sema::analyze(parsed.tree, s, analysis));
  };
  return summary(gm::lint::check_source(source, options));
}

struct PackageRun {
  std::vector<gm::lint::PackageFileResult> results;
  std::map<std::size_t, Checked> checked;
};

// `fillers` more modules, each with a forward calling the helper (threads
// are used from 16 files per thread on).
std::vector<File> package(int fillers) {
  std::vector<File> out = kPackage;
  for (int k = 0; k < fillers; ++k)
    out.push_back({"pkg.fill" + std::to_string(k), false,
                   "from torch import nn\nfrom .helpers import eager\n"
                   "class Net(nn.Module):\n    def forward(self, x):\n"
                   "        print(" +
                       std::to_string(k) + ")\n        return eager(x)\n"});
  return out;
}

PackageRun run(int jobs, const std::vector<File>& modules = kPackage) {
  std::vector<gm::lint::PackageFile> files;
  for (const auto& f : modules)
    files.push_back({f.module, f.is_package, f.text, gm::lint::RuleSelection{}});
  gm::lint::PackageOptions options;
  options.parse.version = {3, 11};
  options.jobs = jobs;
  PackageRun out;
  std::mutex lock;
  out.results = gm::lint::check_package(
      files, options, [&](std::size_t i, const gm::Source&, gm::lint::CheckResult r) {
        std::lock_guard<std::mutex> guard(lock);
        EXPECT_FALSE(out.checked.count(i)) << "checked twice: " << modules[i].module;
        out.checked[i] = summary(r);
      });
  return out;
}

TEST(PackageCheck, EveryFileGetsWhatCheckSourceGivesItAloneWithItsRoots) {
  const PackageRun r = run(1);
  ASSERT_EQ(r.results.size(), kPackage.size());
  std::size_t diagnostics = 0;
  for (std::size_t i = 0; i < kPackage.size(); ++i) {
    const auto& f = kPackage[i];
    if (f.module == "pkg.bad_bytes") {
      EXPECT_TRUE(r.results[i].decode_error.has_value());
      EXPECT_FALSE(r.results[i].regions.has_value());
      EXPECT_FALSE(r.checked.count(i)) << "an undecodable file is left to the caller";
      continue;
    }
    ASSERT_TRUE(r.checked.count(i)) << f.module;
    const Checked expected = alone(f.text, r.results[i].roots);
    EXPECT_EQ(r.checked.at(i).diagnostics, expected.diagnostics) << f.module;
    EXPECT_EQ(r.checked.at(i).syntax_error, expected.syntax_error) << f.module;
    diagnostics += expected.diagnostics.size();
  }
  EXPECT_GT(diagnostics, 0u);  // the test is not vacuous
  // The helper is a region only through the package: its print is found.
  const auto helpers = 2u;
  EXPECT_EQ(r.results[helpers].roots, std::vector<std::string>{"scale"});
  EXPECT_EQ(r.results[helpers].regions, std::optional<bool>(true));
  EXPECT_EQ(r.checked.at(helpers).diagnostics.size(), 1u);
  EXPECT_EQ(r.checked.at(helpers).diagnostics[0].second, "GM201");
  // No region anywhere: nothing, and regions says so.
  EXPECT_EQ(r.results[3].regions, std::optional<bool>(false));
  EXPECT_TRUE(r.checked.at(3).diagnostics.empty());
  // A syntax error is reported through the callback; it has no regions.
  EXPECT_TRUE(r.checked.at(5).syntax_error);
  EXPECT_FALSE(r.results[5].regions.has_value());
}

TEST(PackageCheck, ThreadsDoNotChangeTheResult) {
  const auto modules = package(60);
  const PackageRun one = run(1, modules), many = run(4, modules);
  ASSERT_EQ(one.results.size(), modules.size());
  EXPECT_EQ(one.results[2].roots, (std::vector<std::string>{"eager", "scale"}));
  for (std::size_t i = 0; i < modules.size(); ++i) {
    EXPECT_EQ(one.results[i].roots, many.results[i].roots) << modules[i].module;
    EXPECT_EQ(one.results[i].regions, many.results[i].regions) << modules[i].module;
    ASSERT_EQ(one.checked.count(i), many.checked.count(i));
    if (one.checked.count(i)) {
      EXPECT_EQ(one.checked.at(i).diagnostics, many.checked.at(i).diagnostics);
    }
  }
}

TEST(PackageCheck, WithoutCheckOnlyTheAnalysisRuns) {
  std::vector<gm::lint::PackageFile> files;
  for (const auto& f : kPackage) files.push_back({f.module, f.is_package, f.text, std::nullopt});
  gm::lint::PackageOptions options;
  options.parse.version = {3, 11};
  int calls = 0;
  const auto results = gm::lint::check_package(
      files, options, [&](std::size_t, const gm::Source&, gm::lint::CheckResult) { ++calls; });
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(results[2].roots, std::vector<std::string>{"scale"});
}

}  // namespace
