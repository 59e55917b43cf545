import Foundation
import Testing
import Courier

extension CodingTests {
    @Suite struct LossyArrayTests {
        struct Item: Codable, Equatable, Sendable {
            let id: Int
            let name: String
        }

        struct StrictPage: Decodable {
            let items: [Item]
        }

        struct WrappedPage: Codable, Equatable {
            @LossyArray var items: [Item]
        }

        struct PlainPage: Decodable {
            let items: LossyArray<Item>
        }

        static let json = Data(#"{"items":[{"id":1,"name":"A"},{"id":2},{"id":3,"name":"C"}]}"#.utf8)

        @Test func strictDecodingFailsWithFormattedPath() throws {
            let error = try #require(throws: DecodingError.self) {
                try JSONDecoder().decode(StrictPage.self, from: Self.json)
            }
            guard case .keyNotFound = error else {
                Issue.record("Expected keyNotFound, got \(error)")
                return
            }
            #expect(error.codingPathDescription == "items[1].name")
        }

        @Test func propertyWrapperSkipsMalformedElements() throws {
            let page = try JSONDecoder().decode(WrappedPage.self, from: Self.json)
            #expect(page.items.map(\.id) == [1, 3])
            #expect(page.$items.skippedCount == 1)
            let skip = try #require(page.$items.skipped.first)
            #expect(skip.index == 1)
            #expect(skip.arrayPath == "items")
            #expect(skip.codingPath == "items[1].name")
            #expect(skip.message.hasPrefix("Key not found at items[1].name"))
            #expect(skip.error is DecodingError)
        }

        @Test func plainPropertySkipsMalformedElements() throws {
            let page = try JSONDecoder().decode(PlainPage.self, from: Self.json)
            #expect(page.items.map(\.id) == [1, 3])
            #expect(page.items.skippedCount == 1)
            #expect(page.items.skipped.map(\.index) == [1])
        }

        @Test func topLevelLossyArray() throws {
            let json = Data(#"[{"id":1,"name":"A"},"oops",null,{"id":"4","name":"D"},{"id":5,"name":"E"}]"#.utf8)
            let items = try JSONDecoder().decode(LossyArray<Item>.self, from: json)
            #expect(items.wrappedValue == [Item(id: 1, name: "A"), Item(id: 5, name: "E")])
            #expect(items.skipped.map(\.index) == [1, 2, 3])
            #expect(items.skipped.map(\.arrayPath) == ["<root>", "<root>", "<root>"])
            #expect(items.skipped.last?.codingPath == "[3].id")
        }

        @Test func reporterInUserInfoReceivesEachSkip() throws {
            let reporter = LossyDecodingReporter()
            let decoder = JSONDecoder()
            decoder.userInfo[.lossyDecodingReporter] = reporter
            _ = try decoder.decode(WrappedPage.self, from: Self.json)
            #expect(reporter.count == 1)
            let entry = try #require(reporter.skips.first)
            #expect(entry.index == 1)
            #expect(entry.arrayPath == "items")
            #expect(entry.codingPath == "items[1].name")
            #expect(reporter.drain().count == 1)
            #expect(reporter.count == 0)
        }

        @Test func reporterIsSafeToShareAcrossTasks() async throws {
            let reporter = LossyDecodingReporter()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        let decoder = JSONDecoder()
                        decoder.userInfo[.lossyDecodingReporter] = reporter
                        _ = try decoder.decode(WrappedPage.self, from: Self.json)
                    }
                }
                try await group.waitForAll()
            }
            #expect(reporter.count == 50)
        }

        @Test(arguments: [#"{}"#, #"{"items":null}"#, #"{"items":[]}"#])
        func missingNullOrEmptyDecodesAsEmpty(_ text: String) throws {
            let page = try JSONDecoder().decode(WrappedPage.self, from: Data(text.utf8))
            #expect(page.items.isEmpty)
            #expect(page.$items.skippedCount == 0)
        }

        @Test func nonArrayStillThrows() {
            #expect(throws: DecodingError.self) {
                try JSONDecoder().decode(WrappedPage.self, from: Data(#"{"items":{"id":1}}"#.utf8))
            }
        }

        @Test func encodesAsPlainArray() throws {
            let page = WrappedPage(items: [Item(id: 1, name: "A")])
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let json = String(decoding: try encoder.encode(page), as: UTF8.self)
            #expect(json == #"{"items":[{"id":1,"name":"A"}]}"#)
        }

        @Test func equalityIgnoresSkipRecords() throws {
            let decoded = try JSONDecoder().decode(WrappedPage.self, from: Self.json)
            let built = WrappedPage(items: [Item(id: 1, name: "A"), Item(id: 3, name: "C")])
            #expect(decoded == built)
        }

        @Test func behavesAsCollection() {
            let items: LossyArray<Item> = [Item(id: 1, name: "A"), Item(id: 2, name: "B")]
            #expect(items.count == 2)
            #expect(items.map(\.name) == ["A", "B"])
            #expect(items[1].id == 2)
            #expect(LossyArray<Item>().isEmpty)
        }
    }
}
