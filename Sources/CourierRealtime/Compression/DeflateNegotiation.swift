import Courier
import Foundation

/// The permessage-deflate parameters both sides agreed on (RFC 7692 §7.1), as the server's
/// answer states them.
struct DeflateParameters: Sendable, Hashable {
    /// The server resets its compressor after every message.
    var serverNoContextTakeover = false
    /// The client resets its compressor after every message.
    var clientNoContextTakeover = false
    /// The server's LZ77 window, in bits (15 when the answer names none).
    var serverMaxWindowBits = 15
    /// The client's LZ77 window, in bits (15 when the answer names none).
    var clientMaxWindowBits = 15
    /// The answer as received (one `Sec-WebSocket-Extensions` element).
    var answer = "permessage-deflate"
}

/// Writes the client's permessage-deflate offer and checks the server's answer (RFC 7692 §5, §7.1,
/// with the extension grammar of RFC 6455 §9.1).
enum DeflateNegotiation {
    static let name = "permessage-deflate"

    /// The `Sec-WebSocket-Extensions` value offering `offer`; `client_max_window_bits` is always
    /// offered without a value (the client can use any window the server names).
    static func offerHeader(_ offer: PerMessageDeflate) -> String {
        var parts = [name]
        if offer.serverNoContextTakeover { parts.append("server_no_context_takeover") }
        if offer.clientNoContextTakeover { parts.append("client_no_context_takeover") }
        if let bits = offer.serverMaxWindowBits { parts.append("server_max_window_bits=\(bits)") }
        parts.append("client_max_window_bits")
        return parts.joined(separator: "; ")
    }

    /// The parameters of the server's answer (the `Sec-WebSocket-Extensions` field values), `nil`
    /// when it selected no extension.
    ///
    /// - Throws: ``WebSocketError/negotiationFailed(_:)`` when the answer selects an extension
    ///   that was not offered, selects permessage-deflate twice, or has a parameter that is
    ///   unknown, repeated, has a value where none is allowed (or none where one is needed), or a
    ///   window size outside 8–15 or larger than offered (RFC 7692 §7.1: the client fails the
    ///   connection); also when it leaves out a parameter the offer asked for.
    static func accept(_ values: [String], offer: PerMessageDeflate?) throws -> DeflateParameters? {
        let elements = try parseElements(values)
        guard !elements.isEmpty else { return nil }
        guard let offer else {
            throw failure("the server selected extensions the client did not offer: \(values.joined(separator: ", "))")
        }
        guard elements.count == 1, let element = elements.first else {
            throw failure("the server selected \(elements.count) extensions; one permessage-deflate was offered")
        }
        guard element.name.lowercased() == name else {
            throw failure("the server selected an extension the client did not offer: \(element.name)")
        }
        var result = DeflateParameters(answer: render(element))
        var seen = Set<String>()
        for (key, value) in element.parameters {
            let parameter = key.lowercased()
            guard seen.insert(parameter).inserted else { throw failure("\(parameter) appears twice (RFC 7692 §7)") }
            switch parameter {
            case "server_no_context_takeover", "client_no_context_takeover":
                guard value == nil else { throw failure("\(parameter) takes no value (RFC 7692 §7.1.1)") }
                if parameter == "server_no_context_takeover" {
                    result.serverNoContextTakeover = true
                } else {
                    result.clientNoContextTakeover = true
                }
            case "server_max_window_bits", "client_max_window_bits":
                guard let value, let bits = windowBits(value) else {
                    throw failure("\(parameter) needs a value from 8 to 15 (RFC 7692 §7.1.2), got \(value ?? "none")")
                }
                if parameter == "server_max_window_bits" {
                    if let offered = offer.serverMaxWindowBits, bits > offered {
                        throw failure("server_max_window_bits=\(bits) is larger than the \(offered) offered (RFC 7692 §7.1.2.1)")
                    }
                    result.serverMaxWindowBits = bits
                } else {
                    result.clientMaxWindowBits = bits
                }
            default:
                throw failure("unknown permessage-deflate parameter \(key) (RFC 7692 §7)")
            }
        }
        if offer.serverNoContextTakeover, !result.serverNoContextTakeover {
            throw failure("the answer lacks the server_no_context_takeover the client asked for (RFC 7692 §7.1.1.1)")
        }
        if offer.serverMaxWindowBits != nil, !seen.contains("server_max_window_bits") {
            throw failure("the answer lacks the server_max_window_bits the client asked for (RFC 7692 §7.1.2.1)")
        }
        result.clientNoContextTakeover = result.clientNoContextTakeover || offer.clientNoContextTakeover
        return result
    }

    /// 8–15 written as a plain decimal number without leading zeros (RFC 7692 §7.1.2), the
    /// quotes of a quoted-string already removed.
    private static func windowBits(_ text: String) -> Int? {
        guard !text.isEmpty, text.count <= 2, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber),
            text.first != "0", let bits = Int(text), (8...15).contains(bits)
        else { return nil }
        return bits
    }

    private static func failure(_ message: String) -> WebSocketError {
        .negotiationFailed("permessage-deflate: \(message)")
    }

    struct Element: Equatable {
        var name: String
        var parameters: [(String, String?)]

        static func == (lhs: Element, rhs: Element) -> Bool {
            lhs.name == rhs.name && lhs.parameters.map(\.0) == rhs.parameters.map(\.0)
                && lhs.parameters.map(\.1) == rhs.parameters.map(\.1)
        }
    }

    private static func render(_ element: Element) -> String {
        let parameters = element.parameters.map { key, value in value.map { "\(key)=\($0)" } ?? key }
        return ([element.name] + parameters).joined(separator: "; ")
    }

    /// Splits field values into extension elements (RFC 6455 §9.1: `name *( ";" param )`, elements
    /// separated by commas, a parameter value a token or a quoted-string). Empty elements are
    /// skipped (RFC 9110 §5.6.1 list rules).
    ///
    /// - Throws: ``WebSocketError/negotiationFailed(_:)`` for a malformed element.
    static func parseElements(_ values: [String]) throws -> [Element] {
        var elements: [Element] = []
        for value in values {
            for raw in try splitOutsideQuotes(value, separator: ",") {
                let pieces = try splitOutsideQuotes(raw, separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
                guard let first = pieces.first else { continue }
                if first.isEmpty, pieces.count == 1 { continue }
                guard isToken(first) else { throw failure("malformed extension element \"\(raw)\"") }
                var parameters: [(String, String?)] = []
                for piece in pieces.dropFirst() {
                    guard let equals = piece.firstIndex(of: "=") else {
                        guard isToken(piece) else { throw failure("malformed parameter \"\(piece)\"") }
                        parameters.append((piece, nil))
                        continue
                    }
                    let key = piece[..<equals].trimmingCharacters(in: .whitespaces)
                    var value = piece[piece.index(after: equals)...].trimmingCharacters(in: .whitespaces)
                    if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                        value = String(value.dropFirst().dropLast()).replacingOccurrences(of: "\\", with: "")
                    }
                    guard isToken(key), isToken(value) else { throw failure("malformed parameter \"\(piece)\"") }
                    parameters.append((key, value))
                }
                elements.append(Element(name: first, parameters: parameters))
            }
        }
        return elements
    }

    private static func splitOutsideQuotes(_ text: String, separator: Character) throws -> [String] {
        let split = QuotedStringSplitting.split(text, on: separator)
        guard !split.unterminatedQuote else { throw failure("unterminated quoted string in \"\(text)\"") }
        return split.pieces
    }

    /// An RFC 9110 §5.6.2 token.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty
            && text.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII && scalar.value > 32 && scalar.value < 127
                    && !"()<>@,;:\\\"/[]?={}".unicodeScalars.contains(scalar)
            }
    }
}
