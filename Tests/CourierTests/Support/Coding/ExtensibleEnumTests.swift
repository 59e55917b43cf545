import Foundation
import Testing
import Courier

extension CodingTests {
    @Suite struct ExtensibleEnumTests {
        enum Status: ExtensibleEnum {
            case active, archived
            case unknown(String)

            static let knownCases: [Status] = [.active, .archived]

            var rawValue: String {
                switch self {
                case .active: "active"
                case .archived: "archived"
                case .unknown(let raw): raw
                }
            }
        }

        enum Priority: ExtensibleEnum {
            case low, high
            case unknown(Int)

            static let knownCases: [Priority] = [.low, .high]

            var rawValue: Int {
                switch self {
                case .low: 1
                case .high: 2
                case .unknown(let raw): raw
                }
            }
        }

        struct Record: Codable, Equatable {
            let status: Status
        }

        struct Ticket: Codable, Equatable {
            let priority: Priority
        }

        static func json(_ value: some Encodable) throws -> String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            return String(decoding: try encoder.encode(value), as: UTF8.self)
        }

        @Test func unknownStringDecodesAndReencodesExactly() throws {
            let text = #"{"status":"archived_v2"}"#
            let record = try JSONDecoder().decode(Record.self, from: Data(text.utf8))
            #expect(record.status == .unknown("archived_v2"))
            #expect(!record.status.isKnown)
            #expect(try Self.json(record) == text)
        }

        @Test(arguments: [(#"{"status":"active"}"#, Status.active), (#"{"status":"archived"}"#, .archived)])
        func knownStringRoundTrips(text: String, expected: Status) throws {
            let record = try JSONDecoder().decode(Record.self, from: Data(text.utf8))
            #expect(record.status == expected)
            #expect(record.status.isKnown)
            #expect(try Self.json(record) == text)
        }

        @Test(arguments: [(#"{"priority":1}"#, Priority.low), (#"{"priority":2}"#, .high), (#"{"priority":7}"#, .unknown(7))])
        func intRawValuesRoundTrip(text: String, expected: Priority) throws {
            let ticket = try JSONDecoder().decode(Ticket.self, from: Data(text.utf8))
            #expect(ticket.priority == expected)
            #expect(try Self.json(ticket) == text)
        }

        @Test func initRawValueNeverFails() {
            #expect(Status(rawValue: "active") == .active)
            #expect(Status(rawValue: "") == .unknown(""))
            #expect(Priority(rawValue: -3) == .unknown(-3))
        }

        @Test func wrongRawTypeThrows() {
            #expect(throws: DecodingError.self) {
                try JSONDecoder().decode(Record.self, from: Data(#"{"status":3}"#.utf8))
            }
            #expect(throws: DecodingError.self) {
                try JSONDecoder().decode(Record.self, from: Data(#"{"status":null}"#.utf8))
            }
        }

        @Test func decodesInsideArraysAndAsTopLevel() throws {
            let list = try JSONDecoder().decode([Status].self, from: Data(#"["active","new","archived"]"#.utf8))
            #expect(list == [.active, .unknown("new"), .archived])
            #expect(try Self.json(list) == #"["active","new","archived"]"#)
        }
    }
}
