import Foundation

/// Allocation-light header helpers for the cache's hot path. Header names and directive names are
/// ASCII (RFC 9110 §5.1), so comparisons here are byte-wise ASCII case-insensitive instead of going
/// through Foundation's locale-aware string comparison, which is many times slower on Linux.
enum HeaderScanning {
    /// `true` when `name` equals `lowercased` (which must already be lower-case ASCII), ignoring
    /// ASCII case.
    static func equals(_ name: String, lowercased: String) -> Bool {
        var left = name.utf8.makeIterator()
        var right = lowercased.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return true
            case (let a?, let b?):
                let folded = (a >= 0x41 && a <= 0x5A) ? a | 0x20 : a
                if folded != b { return false }
            default: return false
            }
        }
    }

    /// `text` without leading and trailing spaces and tabs (the only whitespace of HTTP fields,
    /// RFC 9110 §5.6.3).
    static func trim<S: StringProtocol>(_ text: S) -> Substring {
        var slice = Substring(text)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return slice
    }

    /// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) arithmetically; other HTTP-date
    /// forms fall back to ``HTTPDate/parse(_:)`` (RFC 9110 §5.6.7).
    static func date(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        // "Sun, 06 Nov 1994 08:49:37 GMT" is exactly 29 bytes.
        guard bytes.count == 29, bytes[3] == 0x2C, bytes[4] == 0x20, bytes[7] == 0x20, bytes[11] == 0x20,
              bytes[16] == 0x20, bytes[19] == 0x3A, bytes[22] == 0x3A, bytes[25] == 0x20,
              bytes[26] == 0x47, bytes[27] == 0x4D, bytes[28] == 0x54,
              let day = number(bytes, 5, 2), let year = number(bytes, 12, 4),
              let hour = number(bytes, 17, 2), let minute = number(bytes, 20, 2), let second = number(bytes, 23, 2),
              let month = month(bytes[8], bytes[9], bytes[10]),
              year >= 1970, (1...CivilCalendar.daysInMonth(year: year, month: month)).contains(day),
              hour <= 23, minute <= 59, second <= 60
        else { return HTTPDate.parse(text) }
        let days = CivilCalendar.dayNumber(year: year, month: month, day: day)
        let seconds = days * CivilCalendar.secondsPerDay + hour * 3600 + minute * 60 + second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    private static func number(_ bytes: [UInt8], _ start: Int, _ count: Int) -> Int? {
        var value = 0
        for index in start..<(start + count) {
            let byte = bytes[index]
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }

    private static let months: [String] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    private static func month(_ a: UInt8, _ b: UInt8, _ c: UInt8) -> Int? {
        let name = String(decoding: [a | 0x20, b | 0x20, c | 0x20], as: UTF8.self)
        return months.firstIndex(of: name).map { $0 + 1 }
    }
}

extension HTTPHeaders {
    /// Every value of the field `lowercasedName` (lower-case ASCII), in order.
    func cacheValues(_ lowercasedName: String) -> [String] {
        var values: [String] = []
        for field in fields where HeaderScanning.equals(field.name, lowercased: lowercasedName) {
            values.append(field.value)
        }
        return values
    }

    /// The values of `lowercasedName` joined with `", "`, or `nil` when absent.
    func cacheValue(_ lowercasedName: String) -> String? {
        var result: String?
        for field in fields where HeaderScanning.equals(field.name, lowercased: lowercasedName) {
            result = result.map { $0 + ", " + field.value } ?? field.value
        }
        return result
    }

    /// A copy without the field `lowercasedName`, with `value` appended under `name` when given.
    func cacheReplacing(_ lowercasedName: String, name: String, with value: String?) -> HTTPHeaders {
        var kept = fields.filter { !HeaderScanning.equals($0.name, lowercased: lowercasedName) }
        if let value { kept.append(Field(name: name, value: value)) }
        return HTTPHeaders(kept)
    }
}
