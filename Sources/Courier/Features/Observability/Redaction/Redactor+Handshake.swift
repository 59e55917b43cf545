import Foundation

/// A WebSocket opening handshake (RFC 6455 §4.1) as logs may show it: the URL and header fields
/// redacted, and the secrets found in them remembered to scrub any other text about the
/// connection (an error message that repeats the URL, a close reason).
package struct RedactedHandshake: Sendable {
    /// The redacted URL.
    package let url: String
    /// The redacted header fields, `Sec-WebSocket-Protocol` among them.
    package let headers: HTTPHeaders
    private let secrets: SecretValues
    private let marker: String

    fileprivate init(url: String, headers: HTTPHeaders, secrets: SecretValues, marker: String) {
        self.url = url
        self.headers = headers
        self.secrets = secrets
        self.marker = marker
    }

    /// `text` without any secret value found in the URL or the header fields.
    package func scrub(_ text: String) -> String { secrets.scrub(text, marker: marker) }
}

extension Redactor {
    /// Redacts a WebSocket handshake request: the query parameters of ``queryParameters``, the
    /// header fields of ``headers``, and always the offered subprotocols
    /// (`Sec-WebSocket-Protocol`, RFC 6455 §11.3.4) — a place some APIs put a bearer token,
    /// because browsers cannot set `Authorization` on a WebSocket. Each offered subprotocol is
    /// also learned as a secret, so it is scrubbed from the URL and any later text.
    package func redactHandshake(url: URL, headers: HTTPHeaders, subprotocols: [String]) -> RedactedHandshake {
        var secrets = SecretValues()
        learn(headers: headers, into: &secrets)
        for subprotocol in subprotocols { secrets.insert(subprotocol, minimumLength: minimumSecretLength) }
        let redactedURL = redact(url: url.absoluteString, learning: &secrets)
        var fields = redact(headers, secrets: secrets)
        if !subprotocols.isEmpty { fields.add("Sec-WebSocket-Protocol", marker) }
        return RedactedHandshake(url: redactedURL, headers: fields, secrets: secrets, marker: marker)
    }
}
