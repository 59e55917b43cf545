import Foundation
import Testing
import Courier

extension CodingTests {
    @Suite struct DateCodingStrategyTests {
        struct Event: Codable, Equatable {
            let name: String
            let at: Date
        }

        static func decoder() -> JSONDecoder {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .flexibleISO8601
            return decoder
        }

        @Test(arguments: [
            ("2026-05-25T22:46:27.580497Z", 1_779_749_187.580497),
            ("2026-05-25T22:46:27Z", 1_779_749_187),
            ("2026-05-25T22:46:27+02:00", 1_779_741_987),
            ("2026-05-25", 1_779_667_200),
        ])
        func decodesInsideStruct(text: String, unixSeconds: Double) throws {
            let json = Data(#"{"name":"launch","at":"\#(text)"}"#.utf8)
            let event = try Self.decoder().decode(Event.self, from: json)
            #expect(event.name == "launch")
            #expect(abs(event.at.timeIntervalSince1970 - unixSeconds) <= 1e-6)
        }

        @Test func garbageThrowsDataCorruptedNamingFormats() throws {
            let json = Data(#"{"name":"launch","at":"yesterday"}"#.utf8)
            let error = try #require(throws: DecodingError.self) {
                try Self.decoder().decode(Event.self, from: json)
            }
            guard case .dataCorrupted(let context) = error else {
                Issue.record("Expected dataCorrupted, got \(error)")
                return
            }
            #expect(context.debugDescription.contains("yesterday"))
            #expect(context.debugDescription.contains(ISO8601Parsing.acceptedFormatsDescription))
            #expect(error.codingPathDescription == "at")
        }

        @Test func nonStringThrowsTypeMismatch() throws {
            let json = Data(#"{"name":"launch","at":12}"#.utf8)
            let error = try #require(throws: DecodingError.self) {
                try Self.decoder().decode(Event.self, from: json)
            }
            guard case .typeMismatch = error else {
                Issue.record("Expected typeMismatch, got \(error)")
                return
            }
        }

        @Test(arguments: [
            (3, "2026-05-25T22:46:27.580Z"),
            (6, "2026-05-25T22:46:27.580497Z"),
            (0, "2026-05-25T22:46:27Z"),
        ])
        func encodesWithFractionalSeconds(digits: Int, expected: String) throws {
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = digits == 3 ? .iso8601WithFractionalSeconds : .iso8601(fractionalDigits: digits)
            let date = Date(timeIntervalSince1970: 1_779_749_187.580497)
            let json = try encoder.encode(["at": date])
            #expect(String(decoding: json, as: UTF8.self) == #"{"at":"\#(expected)"}"#)
        }

        @Test func encodingOutOfRangeDateThrows() {
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601WithFractionalSeconds
            #expect(throws: EncodingError.self) {
                try encoder.encode(["at": Date(timeIntervalSince1970: 1e12)])
            }
        }

        @Test func roundTripsThroughEncoderAndDecoder() throws {
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601(fractionalDigits: 6)
            let original = Event(name: "x", at: Date(timeIntervalSince1970: 1_779_749_187.580497))
            let decoded = try Self.decoder().decode(Event.self, from: encoder.encode(original))
            #expect(abs(decoded.at.timeIntervalSince1970 - original.at.timeIntervalSince1970) <= 1e-6)
        }
    }
}
