// scenarios/scenario.schema.json against the settings table: the schema is written by hand (for
// editors and python3-jsonschema), so every field's enum, bounds and type are checked here against
// workbench::setting_fields(), and the pass and pattern names against their registries. A new
// setting, a new planner or a changed range fails here until the schema says the same.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "app/workbench/settings.h"
#include "core/passes/fusion_patterns.h"
#include "core/passes/pass_manager.h"

namespace fusebox::workbench {
namespace {

using nlohmann::json;

const json& schema() {
  static const json s =
      read_json_file(std::string(FUSEBOX_SOURCE_DIR) + "/scenarios/scenario.schema.json", "schema");
  return s;
}

const json& settings_properties() { return schema().at("$defs").at("settings").at("properties"); }

// The schema a property refers to: {"$ref": "#/$defs/NAME"} followed once, else the property.
const json& resolved(const json& property) {
  if (property.contains("$ref")) {
    const std::string ref = property.at("$ref");
    const std::string prefix = "#/$defs/";
    EXPECT_EQ(ref.rfind(prefix, 0), 0u) << ref;
    return schema().at("$defs").at(ref.substr(prefix.size()));
  }
  return property;
}

std::vector<std::string> strings(const json& array) { return array.get<std::vector<std::string>>(); }

TEST(Schema, ListsEverySettingAndNoOther) {
  std::set<std::string> in_schema;
  for (const auto& [key, value] : settings_properties().items()) in_schema.insert(key);
  const std::vector<std::string> keys = settings_keys();
  EXPECT_EQ(in_schema, std::set<std::string>(keys.begin(), keys.end()));
  EXPECT_FALSE(schema().at("$defs").at("settings").at("additionalProperties").get<bool>());
}

// Names: the enum is the field's choices, in the table's order. backend is the exception: its
// names are the backends registered here, plugins included, which a file cannot know.
TEST(Schema, NameFieldsListTheTablesChoices) {
  for (const SettingField& f : setting_fields()) {
    if (f.kind != SettingField::Kind::Name) continue;
    SCOPED_TRACE(f.key);
    const json& p = settings_properties().at(f.key);
    if (f.key == "backend") {
      EXPECT_EQ(p, json({{"type", "string"}}));
      continue;
    }
    ASSERT_TRUE(p.contains("enum")) << p.dump();
    EXPECT_EQ(strings(p.at("enum")), f.choices);
  }
}

// Integers: type, minimum and maximum as the table's range (no maximum where it has none).
TEST(Schema, IntegerFieldsHaveTheTablesRange) {
  for (const SettingField& f : setting_fields()) {
    if (f.kind != SettingField::Kind::Integer) continue;
    SCOPED_TRACE(f.key);
    const json& p = settings_properties().at(f.key);
    EXPECT_EQ(p.at("type"), "integer");
    ASSERT_TRUE(f.min.has_value());
    EXPECT_EQ(p.value("minimum", json()), json(*f.min));
    EXPECT_EQ(p.value("maximum", json()), f.max ? json(*f.max) : json());
  }
}

TEST(Schema, SwitchesModelAndMapsHaveTheirShapes) {
  for (const SettingField& f : setting_fields()) {
    SCOPED_TRACE(f.key);
    const json& p = settings_properties().at(f.key);
    switch (f.kind) {
      case SettingField::Kind::Switch:
        EXPECT_EQ(p, json({{"type", "boolean"}}));
        break;
      case SettingField::Kind::Model:
        EXPECT_EQ(resolved(p).at("type"), "string");
        break;
      case SettingField::Kind::Map: {
        const json& entries = resolved(p).at("additionalProperties");
        if (f.min) {  // integers in a range (dims)
          EXPECT_EQ(entries.at("type"), "integer");
          EXPECT_EQ(entries.value("minimum", json()), json(*f.min));
          EXPECT_EQ(entries.value("maximum", json()), f.max ? json(*f.max) : json());
        } else {  // .npy files (inputs)
          EXPECT_EQ(entries.at("type"), "string");
        }
        break;
      }
      case SettingField::Kind::Switches:
        // The names an object may switch: the field's choices (the registry), in its order.
        EXPECT_EQ(resolved(p.at("allOf").at(0)), schema().at("$defs").at("toggles"));
        EXPECT_EQ(strings(p.at("propertyNames").at("enum")), f.choices);
        break;
      case SettingField::Kind::Name:
      case SettingField::Kind::Integer:
        break;
    }
  }
}

// The switches' names are the registries' own: a pass or pattern added or renamed there shows
// up here, not only through the table.
TEST(Schema, PassAndPatternNamesAreTheRegistries) {
  EXPECT_EQ(strings(settings_properties().at("passes").at("propertyNames").at("enum")),
            passes::PassRegistry::instance().names());
  std::vector<std::string> patterns;
  for (const auto& p : passes::FusionRegistry::instance().entries()) patterns.push_back(p.name);
  EXPECT_EQ(strings(settings_properties().at("patterns").at("propertyNames").at("enum")), patterns);
}

}  // namespace
}  // namespace fusebox::workbench
