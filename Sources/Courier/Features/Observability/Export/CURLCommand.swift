import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `curl` command line that reproduces a request — method, URL, header fields and body — for
/// pasting into a terminal or a bug report. Redacted by default: secrets become the redaction
/// marker, so the command shows the request's shape and must be given real credentials to run.
///
/// ```swift
/// print(CURLCommand(request))
/// // curl -X POST 'https://api.example.com/login' \
/// //   -H 'Authorization: Bearer <redacted>' \
/// //   -H 'Content-Type: application/json' \
/// //   --data-raw '{"user":"ann","password":"<redacted>"}'
/// ```
///
/// Every argument is single-quoted for POSIX shells (`'` is written `'\''`); a non-text body of
/// an unredacted command uses Bash/Zsh `$'…'` quoting with `\xHH` escapes, and a body with a NUL
/// byte (which no shell argument can hold) is written to curl's standard input by `printf`
/// (`printf '…' | curl … --data-binary @-`). The body goes with `--data-raw`, which never reads a
/// leading `@` as a file to upload; a header field with an empty value is written `Name;`. Cookies the session
/// adds from its cookie storage and headers from the session configuration are not part of a
/// `URLRequest` and so are not in the command.
public struct CURLCommand: Sendable, Hashable, CustomStringConvertible {
    /// The command text, one option per line joined with ` \` continuations.
    public let text: String

    /// Builds the command for `request`.
    ///
    /// - Parameters:
    ///   - request: The request to reproduce.
    ///   - redactor: Removes secrets (the default). Pass `nil` only to get a runnable command with
    ///     real credentials on a developer machine — never log that output.
    public init(_ request: URLRequest, redactor: Redactor? = Redactor()) {
        let method = request.httpMethod ?? "GET"
        let headers = HTTPHeaders(request)
        guard let redactor else {
            self.text = Self.render(
                method: method, url: request.url?.absoluteString ?? "", headers: headers,
                body: request.httpBody.map { .raw($0) }, note: nil)
            return
        }
        var secrets = SecretValues()
        redactor.learn(headers: headers, into: &secrets)
        let url = redactor.redact(url: request.url?.absoluteString ?? "", learning: &secrets)
        let contentType = headers["Content-Type"]
        var body: Body?
        var note: String?
        if let data = request.httpBody {
            redactor.learn(body: data, contentType: contentType, into: &secrets)
            switch redactor.preview(of: data, contentType: contentType, limit: Int.max, secrets: &secrets) {
            case .text(let text, _)?: body = .text(text)
            case .binary(let size, let type)?: note = "binary body of \(size) bytes\(type.map { " (\($0))" } ?? "") omitted"
            case nil: break
            }
        } else if request.httpBodyStream != nil {
            note = "streamed body omitted"
        }
        self.text = Self.render(
            method: method, url: redactor.scrub(url, secrets: secrets),
            headers: redactor.redact(headers, secrets: secrets), body: body, note: note)
    }

    /// Builds the command from a record, which is already redacted. A body is included only
    /// when the record has a complete text preview (policy ``LoggingPolicy/debugSafe`` and a body
    /// within the preview limit); otherwise a comment line says what was left out.
    public init(_ record: RequestRecord) {
        var body: Body?
        var note: String?
        switch record.body {
        case .text(let text, false)?:
            body = .text(text)
        case .text(_, true)?:
            note = "body of \(record.bodySize ?? 0) bytes truncated in the record; omitted"
        case .binary(let size, let type)?:
            note = "binary body of \(size) bytes\(type.map { " (\($0))" } ?? "") omitted"
        case nil:
            if let size = record.bodySize, size > 0 { note = "body of \(size) bytes not recorded (logging policy)" }
        }
        self.text = Self.render(method: record.method.rawValue, url: record.url, headers: record.headers, body: body, note: note)
    }

    public var description: String { text }

    private enum Body {
        case text(String)
        case raw(Data)
    }

    private static func render(method: String, url: String, headers: HTTPHeaders, body: Body?, note: String?) -> String {
        var lines: [String] = []
        var first = "curl"
        switch method.uppercased() {
        case "GET": break
        case "HEAD": first += " --head"
        default: first += " -X " + quote(method)
        }
        first += " " + quote(url)
        lines.append(first)
        for field in headers {
            // `Name:` with nothing after it tells curl to remove the field; `Name;` sends it empty.
            lines.append("-H " + quote(field.value.isEmpty ? "\(field.name);" : "\(field.name): \(field.value)"))
        }
        // `--data-raw`, never `--data-binary '…'`: curl reads a body starting with `@` as the name
        // of a local file to upload (`@/home/dev/.ssh/id_rsa`). A body with a NUL byte cannot be
        // a shell argument (curl would stop at the NUL): `printf` writes it to curl's stdin.
        var input: String?
        switch body {
        case .text(let text)?:
            if text.utf8.contains(0) {
                input = printfQuote(Data(text.utf8))
                lines.append("--data-binary @-")
            } else {
                lines.append("--data-raw " + quote(text))
            }
        case .raw(let data)?:
            if data.contains(0) {
                input = printfQuote(data)
                lines.append("--data-binary @-")
            } else if let text = String(data: data, encoding: .utf8), UTF8Text.isValid(data) {
                lines.append("--data-raw " + quote(text))
            } else {
                lines.append("--data-raw " + ansiCQuote(data))
            }
        case nil:
            break
        }
        if let input { lines[0] = "printf " + input + " | " + lines[0] }
        let command = lines.joined(separator: " \\\n  ")
        return note.map { "# \($0)\n" + command } ?? command
    }

    /// A `printf` format writing exactly `data`: printable ASCII as is (`%` doubled, `\` escaped),
    /// every other byte as a three-digit octal escape, in POSIX single quotes.
    static func printfQuote(_ data: Data) -> String {
        escaped(data, opening: "'", quote: "'\\''", special: [UInt8(ascii: "%"): "%%"]) { byte in
            let octal = String(byte, radix: 8)
            return "\\" + String(repeating: "0", count: 3 - octal.count) + octal
        }
    }

    /// POSIX single-quoting: everything literal, `'` closed, escaped and reopened.
    static func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Bash/Zsh ANSI-C quoting, every byte outside printable ASCII as `\xHH`.
    static func ansiCQuote(_ data: Data) -> String {
        escaped(data, opening: "$'", quote: "\\'") { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return "\\x" + (hex.count == 1 ? "0" + hex : hex)
        }
    }

    /// `data` between `opening` and `'`: printable ASCII as is, `'` as `quote`, `\` doubled, the
    /// bytes of `special` as given, any other byte as `escape` writes it.
    private static func escaped(
        _ data: Data, opening: String, quote: String, special: [UInt8: String] = [:], escape: (UInt8) -> String
    ) -> String {
        var result = opening
        for byte in data {
            if let text = special[byte] {
                result += text
                continue
            }
            switch byte {
            case UInt8(ascii: "'"): result += quote
            case UInt8(ascii: "\\"): result += "\\\\"
            case 0x20...0x7E: result.unicodeScalars.append(Unicode.Scalar(byte))
            default: result += escape(byte)
            }
        }
        return result + "'"
    }
}

extension URLRequest {
    /// A redacted `curl` command reproducing this request; see ``CURLCommand``.
    public var cURLCommand: String { CURLCommand(self).text }
}
