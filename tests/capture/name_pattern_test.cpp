// Shell-style patterns over range names (tools/capture/common/name_pattern.hpp): what matches,
// what is refused as malformed, and how numbered names fold into one series.
#include "common/name_pattern.hpp"

#include "catch.hpp"

#include <stdexcept>
#include <string>

using nvtxpp::capture::fold_digits;
using nvtxpp::capture::has_wildcards;
using nvtxpp::capture::name_grouping;
using nvtxpp::capture::name_pattern;

TEST_CASE("a name without wildcards matches only itself") {
  name_pattern const p{"Train step"};
  CHECK(p.is_literal());
  CHECK(p.matches("Train step"));
  CHECK_FALSE(p.matches("Train step 1"));
  CHECK_FALSE(p.matches("Train ste"));
  CHECK_FALSE(has_wildcards("Train step"));
  CHECK(name_pattern{""}.matches(""));
  CHECK_FALSE(name_pattern{""}.matches("x"));
}

TEST_CASE("stars, question marks and sets") {
  name_pattern const step{"Train step *"};
  CHECK_FALSE(step.is_literal());
  CHECK(step.matches("Train step 1"));
  CHECK(step.matches("Train step 573"));
  CHECK(step.matches("Train step "));
  CHECK_FALSE(step.matches("Train step"));
  CHECK_FALSE(step.matches("Eval step 1"));
  CHECK(name_pattern{"Layer ?"}.matches("Layer 7"));
  CHECK_FALSE(name_pattern{"Layer ?"}.matches("Layer 11"));
  CHECK(name_pattern{"Layer [0-9]*"}.matches("Layer 11"));
  CHECK_FALSE(name_pattern{"Layer [0-9]*"}.matches("Layer x"));
  CHECK(name_pattern{"[!a-z]*"}.matches("H2D"));
  CHECK_FALSE(name_pattern{"[!a-z]*"}.matches("h2d"));
  CHECK(name_pattern{"[^a-z]*"}.matches("H2D"));
  CHECK(name_pattern{"[]x]"}.matches("]"));
  CHECK(name_pattern{"[]x]"}.matches("x"));
  CHECK(name_pattern{"*a*b*c*"}.matches("xxaxxbxxcxx"));
  CHECK_FALSE(name_pattern{"*a*b*c*"}.matches("xxaxxcxxbxx"));
  CHECK(name_pattern{"*"}.matches(""));
  CHECK(name_pattern{"a*"}.matches("a"));
}

TEST_CASE("escapes make wildcards literal") {
  name_pattern const p{"100\\*"};
  CHECK(p.is_literal());
  CHECK(p.literal() == "100*");
  CHECK(p.matches("100*"));
  CHECK_FALSE(p.matches("1000"));
  CHECK(name_pattern{"a\\?*"}.matches("a?b"));
  CHECK_FALSE(name_pattern{"a\\?*"}.matches("ab"));
  CHECK(name_pattern{"[\\]]"}.matches("]"));
}

TEST_CASE("many stars against a long name stay fast") {
  std::string const name(20000, 'a');
  CHECK_FALSE(name_pattern{"*a*a*a*a*a*a*a*a*a*a*b"}.matches(name));
  CHECK(name_pattern{"*a*a*a*a*a*a*a*a*a*a*"}.matches(name));
}

TEST_CASE("malformed patterns are refused with the reason") {
  CHECK_THROWS_AS(name_pattern{"Layer [0-9"}, std::invalid_argument);
  CHECK_THROWS_AS(name_pattern{"step\\"}, std::invalid_argument);
  CHECK_THROWS_AS(name_pattern{"[z-a]"}, std::invalid_argument);
  try {
    name_pattern{"Layer [0-9"};
  } catch (std::invalid_argument const& e) {
    CHECK(std::string{e.what()}.find("no closing ']'") != std::string::npos);
  }
}

TEST_CASE("digits fold into one series") {
  CHECK(fold_digits("Train step 12") == "Train step *");
  CHECK(fold_digits("Layer 3/block 10") == "Layer */block *");
  CHECK(fold_digits("H2D Memory") == "H2D Memory");
  CHECK(fold_digits("H2D Memory Stream 3") == "H2D Memory Stream *");
  CHECK(fold_digits("layer0") == "layer*");
  CHECK(fold_digits("12ab") == "*ab");
  CHECK(fold_digits("a*1") == "a\\**");
  CHECK(name_pattern{fold_digits("a*1")}.matches("a*1"));
  CHECK(name_pattern{fold_digits("Train step 12")}.matches("Train step 12"));
}

TEST_CASE("grouping: the first matching pattern, then folding, else the name") {
  name_grouping const g{{"Train step *", "Layer *"}, false};
  CHECK(g.active());
  CHECK(g.group_of("Train step 3") == "Train step *");
  CHECK(g.group_of("Layer 11") == "Layer *");
  CHECK(g.group_of("Eval 3") == "Eval 3");
  name_grouping const f{{"Layer *"}, true};
  CHECK(f.group_of("Layer 11") == "Layer *");
  CHECK(f.group_of("Eval 3") == "Eval *");
  CHECK_FALSE(name_grouping{}.active());
  CHECK(name_grouping{}.group_of("x 1") == "x 1");
  CHECK_THROWS_AS((name_grouping{{"bad["}, false}), std::invalid_argument);
}
