import Foundation
import Testing
import Courier

extension CodingTests {
    @Suite struct CodingPathFormatterTests {
        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int?

            init(_ string: String) {
                stringValue = string
                intValue = nil
            }

            init(_ index: Int) {
                stringValue = "Index \(index)"
                intValue = index
            }

            init?(stringValue: String) { self.init(stringValue) }
            init?(intValue: Int) { self.init(intValue) }
        }

        @Test(arguments: [
            ([Key](), "<root>"),
            ([Key("items"), Key(1), Key("name")], "items[1].name"),
            ([Key(0), Key("id")], "[0].id"),
            ([Key("a"), Key("b"), Key("c")], "a.b.c"),
            ([Key("matrix"), Key(2), Key(3)], "matrix[2][3]"),
            ([Key("meta"), Key("x.y")], #"meta["x.y"]"#),
            ([Key("meta"), Key("")], #"meta[""]"#),
            ([Key("first name")], #"["first name"]"#),
            ([Key("q"), Key(#"say "hi""#)], #"q["say \"hi\""]"#),
        ])
        func formats(path: [Key], expected: String) {
            #expect(CodingPathFormatter.string(path) == expected)
        }

        struct Inner: Decodable {
            let name: String
            let id: Int
        }
        struct Outer: Decodable { let items: [Inner] }

        static func decodeError(_ json: String) throws -> DecodingError {
            try #require(throws: DecodingError.self) {
                try JSONDecoder().decode(Outer.self, from: Data(json.utf8))
            }
        }

        @Test(arguments: [
            (#"{"items":[{"id":1,"name":"A"},{"id":2}]}"#, "items[1].name", "Key not found at items[1].name"),
            (#"{"items":[{"id":"x","name":"A"}]}"#, "items[0].id", "Type mismatch at items[0].id: expected Int."),
            (#"{"items":[{"id":null,"name":"A"}]}"#, "items[0].id", "Value not found at items[0].id: expected Int."),
            (#"{"items":"#, "<root>", "Data corrupted at <root>"),
        ])
        func summarisesDecodingErrors(json: String, path: String, prefix: String) throws {
            let error = try Self.decodeError(json)
            #expect(error.codingPathDescription == path)
            #expect(error.debugSummary.hasPrefix(prefix))
            #expect(!error.debugSummary.contains("\n"))
        }
    }
}
