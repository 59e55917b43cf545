import Foundation

/// The user-facing messages of ``NetworkError``, replaceable by the app — for its own wording or
/// its localisation. English by default (``english``).
///
/// <!-- sample: apple — String(localized:) is in Apple's Foundation only -->
/// ```swift
/// NetworkError.messages = ErrorMessages([
///     .offline: String(localized: "error.offline"),
///     .timedOut: String(localized: "error.timedOut"),
/// ])
/// // or, with full access to the error:
/// NetworkError.messages = ErrorMessages { error in
///     error.kind == .rateLimited ? retryText(error.retryAfter) : nil
/// }
/// ```
/// An endpoint's known-error message for the status comes first (it is the app's own text, per
/// endpoint: localise it there); then these messages; a message the app returns `nil` for falls
/// back to the server's message (never a 5xx's: that text is about the server's insides), then to
/// ``english`` (see ``NetworkError/userMessage``).
public struct ErrorMessages: Sendable {
    private let lookup: @Sendable (NetworkError) -> String?

    /// Messages from a closure; return `nil` to fall back.
    public init(_ lookup: @escaping @Sendable (NetworkError) -> String?) { self.lookup = lookup }

    /// Messages from a table keyed by the error's ``NetworkError/kind``; missing kinds fall back.
    public init(_ table: [NetworkError.Kind: String]) { self.lookup = { table[$0.kind] } }

    /// The message for `error`, or `nil` to fall back.
    package func message(for error: NetworkError) -> String? { lookup(error) }

    /// No messages of the app's own: every error falls back.
    public static let none = ErrorMessages { _ in nil }

    /// Courier's English sentence per case, and one of its own for a refused server certificate
    /// (``NetworkError/certificateFailure``, inside ``NetworkError/Kind/transport``):
    /// ``certificateMessage``.
    public static let english = ErrorMessages { error in
        error.certificateFailure != nil ? certificateMessage : englishByKind[error.kind]
    }

    /// The English sentence for a server certificate the client refused (expired, not yet valid,
    /// issued by an unknown authority or for another host, no pinned key): the connection was not
    /// made because the server could not prove who it is. An app's own ``ErrorMessages`` closure
    /// gives its wording with `error.certificateFailure != nil`.
    public static let certificateMessage = "The server's identity could not be verified, so no connection was made."

    private static let englishByKind: [NetworkError.Kind: String] = [
        .offline: "You appear to be offline.",
        .networkUnavailable: "This will load on Wi-Fi or when Low Data Mode is off.",
        .timedOut: "The request took too long.",
        .cancelled: "Cancelled.",
        .unauthorized: "Please sign in.",
        .signedOut: "Please sign in.",
        .sessionExpired: "Your session has expired. Please sign in again.",
        .tokenStoreFailed: "Your sign-in could not be read. Try again in a moment.",
        .forbidden: "You don't have access to this.",
        .notFound: "Not found.",
        .conflict: "This was changed elsewhere. Reload and try again.",
        .unprocessable: "The request was not valid.",
        .rateLimited: "Too many requests. Try again later.",
        .server: "Something went wrong on our side.",
        .client: "The request was not accepted.",
        .rejected: "The server rejected the request.",
        .decoding: "The server sent something unexpected.",
        .invalidRequest: "The request could not be built.",
        .missingInterceptor: "The request could not be built.",
        .transport: "A network error occurred.",
        .undecodableResponse: "The server sent something unexpected.",
        .notCached: "This isn't available offline yet.",
        .streamBufferOverflow: "The download fell behind. Try again.",
        .responseTooLarge: "The server sent more than this app can take.",
        .redirectRefused: "The server sent this request somewhere the app does not go.",
        .backendUnavailable: "Our servers are having trouble. Try again in a moment.",
    ]
}

extension NetworkError {
    private static let currentMessages = Locked(ErrorMessages.none)

    /// The app's messages for ``userMessage``, process-wide; ``ErrorMessages/none`` (Courier's
    /// English) until the app sets them, typically once at launch. Thread-safe.
    public static var messages: ErrorMessages {
        get { currentMessages.current }
        set { currentMessages.set(newValue) }
    }
}
