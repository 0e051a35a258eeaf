// Imports the fixes left unused are removed only when nothing else can reach
// them (lint/unused_imports.h), through fix_to_fixpoint with GM203.
#include <gtest/gtest.h>

#include <string>

#include "rule_fixture_harness.h"

namespace gm::rules {
namespace {

using rule_fixtures::fix_text;

constexpr const char* kClass =
    "\n\nclass M(nn.Module):\n    def forward(self, x):\n"
    "        warnings.warn(\"slow path\")\n        return x + 1\n";

std::string mended_class() {
  return "\n\nclass M(nn.Module):\n    def forward(self, x):\n"
         "        _graphmend_rt.warn(\"slow path\")\n        return x + 1\n";
}

TEST(UnusedImports, TheOnlyUseRewrittenRemovesTheImport) {
  const std::string in =
      std::string("import os\nimport warnings\n\nimport torch\nfrom torch import nn\n") + kClass;
  EXPECT_EQ(fix_text("GM203", in),
            "import os\n\nimport torch\nfrom torch import nn\n"
            "import graphmend.runtime as _graphmend_rt\n" +
                mended_class());
}

TEST(UnusedImports, KeptWhenStillUsed) {
  const std::string in = std::string(
                             "import warnings\n\nimport torch\nfrom torch import nn\n\n"
                             "warnings.simplefilter(\"once\")\n") +
                         kClass;
  EXPECT_NE(fix_text("GM203", in).find("import warnings\n"), std::string::npos);
}

TEST(UnusedImports, KeptWhenTheModuleCouldReExportIt) {
  for (const std::string extra : {"__all__ = [\"M\"]\n", "def __getattr__(name):\n    return 1\n",
                                  "NOTE = \"see warnings.warn\"\n", "G = globals()\n"}) {
    const std::string in =
        std::string("import warnings\n\nimport torch\nfrom torch import nn\n\n") + extra + kClass;
    const std::string out = fix_text("GM203", in);
    EXPECT_NE(out.find("_graphmend_rt.warn("), std::string::npos) << extra;
    EXPECT_NE(out.find("import warnings\n"), std::string::npos) << extra;
  }
}

TEST(UnusedImports, AnImportUnusedBeforeIsNotTouched) {
  // `os` was never read: not this fix's business.
  const std::string in =
      std::string("import os\nimport warnings\n\nimport torch\nfrom torch import nn\n") + kClass;
  EXPECT_NE(fix_text("GM203", in).find("import os\n"), std::string::npos);
}

TEST(UnusedImports, AliasedOrDottedImportsAreKept) {
  for (const std::string imp : {"import warnings as w\n", "import os.path\n"}) {
    const std::string body =
        imp == "import warnings as w\n"
            ? std::string(kClass).replace(std::string(kClass).find("warnings"), 8, "w")
            : std::string(kClass);
    const std::string in = imp + "import warnings\n\nimport torch\nfrom torch import nn\n" + body;
    EXPECT_NE(fix_text("GM203", in).find(imp), std::string::npos) << imp;
  }
}

// `from warnings import warn` rewritten away: removed when `warnings` is still
// imported by another statement (its module import, and side effects, stay),
// kept when it is the module's only import, when its name is in a string, or
// when the statement binds several names.
constexpr const char* kFromClass =
    "\n\nclass M(nn.Module):\n    def forward(self, x):\n"
    "        warn(\"slow path\")\n        return x + 1\n";

TEST(UnusedImports, AFromImportGoesWhenItsModuleIsStillImported) {
  const std::string in = std::string(
                             "import warnings\nfrom warnings import warn\n\nimport torch\n"
                             "from torch import nn\n\nwarnings.simplefilter(\"once\")\n") +
                         kFromClass;
  const std::string out = fix_text("GM203", in);
  EXPECT_NE(out.find("_graphmend_rt.warn("), std::string::npos);
  EXPECT_EQ(out.find("from warnings import warn"), std::string::npos) << out;
}

TEST(UnusedImports, AFromImportIsKeptOtherwise) {
  for (const std::string& head :
       {std::string("from warnings import warn\n"),                  // the module's only import
        std::string("import warnings\nfrom warnings import warn, catch_warnings\n"),  // two names
        std::string("import warnings\nfrom warnings import warn\nDOC = \"call warn\"\n")}) {
    const std::string in = head + "\nimport torch\nfrom torch import nn\n" + kFromClass;
    const std::string out = fix_text("GM203", in);
    EXPECT_NE(out.find("_graphmend_rt.warn("), std::string::npos) << head;
    EXPECT_NE(out.find("from warnings import warn"), std::string::npos) << head;
  }
}

}  // namespace
}  // namespace gm::rules
