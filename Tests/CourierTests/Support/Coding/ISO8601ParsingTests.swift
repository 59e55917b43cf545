import Foundation
import Testing
@testable import Courier

extension CodingTests {
    @Suite struct ISO8601ParsingTests {
        /// 2026-05-25T22:46:27Z in Unix seconds (computed independently).
        static let reference: TimeInterval = 1_779_749_187

        struct Case: CustomTestStringConvertible, Sendable {
            let text: String
            let unixSeconds: TimeInterval
            var testDescription: String { text }
        }

        static let validCases: [Case] = [
            Case(text: "2026-05-25T22:46:27.580497Z", unixSeconds: reference + 0.580497),
            Case(text: "2026-05-25T22:46:27Z", unixSeconds: reference),
            Case(text: "2026-05-25T22:46:27+02:00", unixSeconds: reference - 7_200),
            Case(text: "2026-05-25T22:46:27-05:30", unixSeconds: reference + 19_800),
            Case(text: "2026-05-25T22:46:27+0200", unixSeconds: reference - 7_200),
            Case(text: "2026-05-25T22:46:27+02", unixSeconds: reference - 7_200),
            Case(text: "2026-05-25", unixSeconds: 1_779_667_200),
            Case(text: "2026-05-25T22:46:27.5Z", unixSeconds: reference + 0.5),
            Case(text: "2026-05-25T22:46:27.58Z", unixSeconds: reference + 0.58),
            Case(text: "2026-05-25T22:46:27.580Z", unixSeconds: reference + 0.58),
            Case(text: "2026-05-25T22:46:27.123456789Z", unixSeconds: reference + 0.123456789),
            Case(text: "2026-05-25T22:46:27.1234567891234Z", unixSeconds: reference + 0.123456789),
            Case(text: "2026-05-25T22:46:27.580497+02:00", unixSeconds: reference - 7_200 + 0.580497),
            Case(text: "2026-05-25t22:46:27z", unixSeconds: reference),
            Case(text: "2026-05-25 22:46:27Z", unixSeconds: reference),
            Case(text: "2026-05-25T22:46:27,5Z", unixSeconds: reference + 0.5),
            Case(text: "1969-12-31T23:59:59Z", unixSeconds: -1),
            Case(text: "1969-12-31T23:59:59.25Z", unixSeconds: -0.75),
            Case(text: "2000-02-29", unixSeconds: 951_782_400),
            Case(text: "0001-01-01T00:00:00Z", unixSeconds: -62_135_596_800),
            Case(text: "9999-12-31T23:59:59Z", unixSeconds: 253_402_300_799),
        ]

        @Test(arguments: validCases)
        func parsesValidTimestamp(_ testCase: Case) throws {
            let date = try #require(ISO8601Parsing.date(from: testCase.text))
            #expect(abs(date.timeIntervalSince1970 - testCase.unixSeconds) <= 1e-6)
        }

        @Test func keepsMicrosecondPrecision() throws {
            let date = try #require(ISO8601Parsing.date(from: "2026-05-25T22:46:27.580497Z"))
            let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
            #expect(micros == 1_779_749_187_580_497)
        }

        @Test func offsetFormsDenoteTheSameInstant() throws {
            let zulu = try #require(ISO8601Parsing.date(from: "2026-05-25T20:46:27Z"))
            let offset = try #require(ISO8601Parsing.date(from: "2026-05-25T22:46:27+02:00"))
            #expect(zulu == offset)
        }

        @Test(arguments: [
            "",
            "garbage",
            "2026-05-25T22:46:27",
            "2026-05-25T22:46Z",
            "2026-5-25",
            "26-05-25",
            "2026-13-01",
            "2026-00-10",
            "2026-02-30",
            "2025-02-29",
            "2026-05-25T24:00:00Z",
            "2026-05-25T22:60:00Z",
            "2026-05-25T22:46:60Z",
            "2026-05-25T22:46:27.Z",
            "2026-05-25T22:46:27+2:00",
            "2026-05-25T22:46:27+02:0",
            "2026-05-25T22:46:27+24:00",
            "2026-05-25T22:46:27+02:60",
            "2026-05-25T22:46:27ZZ",
            " 2026-05-25",
            "2026-05-25 ",
            "2026-05-25T",
            "１２３４-05-25",
        ])
        func rejectsInvalidTimestamp(_ text: String) {
            #expect(ISO8601Parsing.date(from: text) == nil)
        }

        @Test(arguments: [
            (0, "2026-05-25T22:46:27Z"),
            (3, "2026-05-25T22:46:27.580Z"),
            (6, "2026-05-25T22:46:27.580497Z"),
        ])
        func formatsWithRequestedDigits(digits: Int, expected: String) throws {
            let date = try #require(ISO8601Parsing.date(from: "2026-05-25T22:46:27.580497Z"))
            #expect(ISO8601Parsing.string(from: date, fractionalDigits: digits) == expected)
        }

        @Test func formattingTruncatesToRequestedDigits() {
            let date = Date(timeIntervalSince1970: Self.reference + 0.9996)
            #expect(ISO8601Parsing.string(from: date, fractionalDigits: 3) == "2026-05-25T22:46:27.999Z")
            #expect(ISO8601Parsing.string(from: date, fractionalDigits: 0) == "2026-05-25T22:46:27Z")
        }

        @Test func formattingRoundsAwayFloatingPointNoiseWithCarry() {
            let date = Date(timeIntervalSince1970: Self.reference + 0.9999997)
            #expect(ISO8601Parsing.string(from: date, fractionalDigits: 3) == "2026-05-25T22:46:28.000Z")
            let noisy = Date(timeIntervalSince1970: Self.reference + 0.58 - 1e-9)
            #expect(ISO8601Parsing.string(from: noisy, fractionalDigits: 2) == "2026-05-25T22:46:27.58Z")
        }

        @Test func formatsDatesBeforeTheEpoch() {
            let date = Date(timeIntervalSince1970: -0.75)
            #expect(ISO8601Parsing.string(from: date, fractionalDigits: 2) == "1969-12-31T23:59:59.25Z")
        }

        @Test func formattingRejectsUnrepresentableDates() {
            #expect(ISO8601Parsing.string(from: Date(timeIntervalSince1970: 253_402_300_800)) == nil)
            #expect(ISO8601Parsing.string(from: Date(timeIntervalSince1970: -62_167_219_201)) == nil)
            #expect(ISO8601Parsing.string(from: Date(timeIntervalSinceReferenceDate: .infinity)) == nil)
        }

        @Test(arguments: [
            "2026-05-25T22:46:27.580Z",
            "2000-02-29T00:00:00.000Z",
            "1969-12-31T23:59:59.250Z",
            "0000-01-01T00:00:00.000Z",
            "9999-12-31T23:59:59.999Z",
        ])
        func roundTrips(_ text: String) throws {
            let date = try #require(ISO8601Parsing.date(from: text))
            #expect(ISO8601Parsing.string(from: date, fractionalDigits: 3) == text)
        }

        /// Digits 7–9 are not checked: they exceed `Date`'s `Double`
        /// resolution (about 0.1 µs today) and show representation noise.
        @Test(arguments: [0, 1, 3, 6])
        func formattingInvertsParsingAcrossManyFractions(digits: Int) throws {
            for step in 0..<2_000 {
                // Deterministic spread over seconds 10–59 and all microsecond values.
                let second = 10 + step % 50
                let fraction = String(1_000_000 + (step * 104_729 + 7_919) % 1_000_000).dropFirst()
                let text =
                    digits == 0
                    ? "2026-05-25T22:46:\(second)Z"
                    : "2026-05-25T22:46:\(second).\(fraction.prefix(digits))Z"
                let date = try #require(ISO8601Parsing.date(from: text))
                #expect(ISO8601Parsing.string(from: date, fractionalDigits: digits) == text)
            }
        }

        @Test func parsesConcurrentlyWithoutSharedState() async {
            let results = await withTaskGroup(of: Bool.self) { group in
                for offset in 0..<200 {
                    group.addTask {
                        let text = "2026-05-25T22:46:\(String(format: "%02d", offset % 60)).\(offset)Z"
                        return ISO8601Parsing.date(from: text) != nil
                    }
                }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(results.count == 200 && results.allSatisfy { $0 })
        }
    }
}

@Suite("Zone-less timestamps declared UTC")
struct ZonelessTimestampTests {
    struct Stamp: Decodable { var at: Date }

    @Test func assumingUTCReadsAZonelessTimeAsUTC() throws {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .flexibleISO8601AssumingUTC
        let zoneless = try decoder.decode(Stamp.self, from: Data(#"{"at":"2026-05-25T22:46:27.5"}"#.utf8))
        let explicit = try decoder.decode(Stamp.self, from: Data(#"{"at":"2026-05-25T22:46:27.5Z"}"#.utf8))
        #expect(zoneless.at == explicit.at)
        let offset = try decoder.decode(Stamp.self, from: Data(#"{"at":"2026-05-25T22:46:27+02:00"}"#.utf8))
        #expect(offset.at.timeIntervalSince(explicit.at) == -7200.5)
    }

    @Test func theDefaultStrategyStillRejectsAZonelessTime() {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .flexibleISO8601
        #expect(throws: DecodingError.self) {
            try decoder.decode(Stamp.self, from: Data(#"{"at":"2026-05-25T22:46:27"}"#.utf8))
        }
    }
}
