import Foundation
import Testing
import Courier

/// One `Date` property coded in its own format, whatever the client's strategy.
@Suite struct CodedDateTests {
    enum DayMonthYear: DateCodingPattern {
        static let pattern = "dd.MM.yyyy"
    }

    struct Event: Codable, Equatable {
        var plain: Date
        @CodedDate<DateCoding.SecondsSince1970> var seconds: Date
        @CodedDate<DateCoding.MillisecondsSince1970> var milliseconds: Date
        @CodedDate<DateCoding.ISO8601> var iso: Date
        @CodedDate<DateCoding.ISO8601WithFractionalSeconds> var isoFraction: Date
        @CodedDate<DayMonthYear> var day: Date
        @CodedOptionalDate<DateCoding.SecondsSince1970> var ended: Date?
    }

    static let instant = Date(timeIntervalSince1970: 1_767_225_600.25)  // 2026-01-01T00:00:00.250Z
    static let midnight = Date(timeIntervalSince1970: 1_767_225_600)

    static func clientDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .flexibleISO8601
        return decoder
    }

    static func clientEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601WithFractionalSeconds
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }

    @Test func eachPropertyIsWrittenInItsOwnFormatOverridingTheClientsStrategy() throws {
        let event = Event(
            plain: Self.instant, seconds: Self.instant, milliseconds: Self.instant, iso: Self.instant,
            isoFraction: Self.instant, day: Self.midnight, ended: nil)
        let json = String(decoding: try Self.clientEncoder().encode(event), as: UTF8.self)
        #expect(
            json == #"{"day":"01.01.2026","iso":"2026-01-01T00:00:00Z","isoFraction":"2026-01-01T00:00:00.250Z","#
                + #""milliseconds":1767225600250,"plain":"2026-01-01T00:00:00.250Z","seconds":1767225600.25}"#)
    }

    @Test func decodingReadsEachFormatAndRoundTrips() throws {
        let json = #"""
            {"plain": "2026-01-01T00:00:00.250Z", "seconds": 1767225600.25, "milliseconds": 1767225600250,
             "iso": "2026-01-01T00:00:00Z", "isoFraction": "2026-01-01T00:00:00.250Z", "day": "01.01.2026",
             "ended": 1767225600}
            """#
        let event = try Self.clientDecoder().decode(Event.self, from: Data(json.utf8))
        #expect(event.plain == Self.instant)
        #expect(event.seconds == Self.instant)
        #expect(event.milliseconds == Self.instant)
        #expect(event.iso == Self.midnight)
        #expect(event.isoFraction == Self.instant)
        #expect(event.day == Self.midnight)
        #expect(event.ended == Self.midnight)
        let again = try Self.clientDecoder().decode(Event.self, from: Self.clientEncoder().encode(event))
        #expect(again == event)
    }

    @Test func wholeSecondsAreWrittenAsIntegers() throws {
        struct Stamp: Codable { @CodedDate<DateCoding.SecondsSince1970> var at: Date }
        let json = try JSONEncoder().encode(Stamp(at: Self.midnight))
        #expect(String(decoding: json, as: UTF8.self) == #"{"at":1767225600}"#)
    }

    @Test func anOptionalDateMayBeNullOrAbsentAndNilIsLeftOut() throws {
        struct Subscription: Codable, Equatable {
            var id: Int
            @CodedOptionalDate<DateCoding.MillisecondsSince1970> var cancelledAt: Date?
        }
        let decoder = JSONDecoder()
        #expect(try decoder.decode(Subscription.self, from: Data(#"{"id":1}"#.utf8)).cancelledAt == nil)
        #expect(try decoder.decode(Subscription.self, from: Data(#"{"id":1,"cancelledAt":null}"#.utf8)).cancelledAt == nil)
        #expect(
            try decoder.decode(Subscription.self, from: Data(#"{"id":1,"cancelledAt":1000}"#.utf8)).cancelledAt
                == Date(timeIntervalSince1970: 1))
        #expect(String(decoding: try JSONEncoder().encode(Subscription(id: 1, cancelledAt: nil)), as: UTF8.self) == #"{"id":1}"#)
        let stored = Subscription(id: 2, cancelledAt: Date(timeIntervalSince1970: 1.5))
        #expect(try decoder.decode(Subscription.self, from: JSONEncoder().encode(stored)) == stored)
    }

    @Test func aStringWhereANumberIsExpectedIsATypeMismatchAtTheProperty() throws {
        struct Stamp: Codable { @CodedDate<DateCoding.MillisecondsSince1970> var paidAt: Date }
        let error = try #require(throws: DecodingError.self) {
            try JSONDecoder().decode(Stamp.self, from: Data(#"{"paidAt":"yesterday"}"#.utf8))
        }
        guard case .typeMismatch(_, let context) = error else {
            Issue.record("expected typeMismatch, got \(error)")
            return
        }
        #expect(context.codingPath.map(\.stringValue) == ["paidAt"])
        #expect(context.debugDescription.contains("milliseconds since 1970"))
    }

    @Test func aMalformedISOStringIsDataCorruptedNamingTheValue() throws {
        struct Stamp: Codable { @CodedDate<DateCoding.ISO8601> var startsAt: Date }
        let error = try #require(throws: DecodingError.self) {
            try JSONDecoder().decode(Stamp.self, from: Data(#"{"startsAt":"2026-13-45"}"#.utf8))
        }
        guard case .dataCorrupted(let context) = error else {
            Issue.record("expected dataCorrupted, got \(error)")
            return
        }
        #expect(context.codingPath.map(\.stringValue) == ["startsAt"])
        #expect(context.debugDescription.contains("2026-13-45"))
    }

    @Test func aStringNotMatchingThePatternIsDataCorruptedNamingThePattern() throws {
        struct Passport: Codable { @CodedDate<DayMonthYear> var issuedOn: Date }
        let error = try #require(throws: DecodingError.self) {
            try JSONDecoder().decode(Passport.self, from: Data(#"{"issuedOn":"2026-01-01"}"#.utf8))
        }
        guard case .dataCorrupted(let context) = error else {
            Issue.record("expected dataCorrupted, got \(error)")
            return
        }
        #expect(context.debugDescription.contains("dd.MM.yyyy"))
    }

    @Test func anOptionalDateWithAWrongValueStillFails() throws {
        struct Stamp: Codable { @CodedOptionalDate<DateCoding.SecondsSince1970> var at: Date? }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Stamp.self, from: Data(#"{"at":"soon"}"#.utf8))
        }
    }
}
