/// The zlib streams of one connection with permessage-deflate negotiated (RFC 7692), set up from
/// the server's answer.
struct DeflateCodec {
    /// Inflates the server's compressed messages (resets per message under
    /// `server_no_context_takeover`).
    let inflater: RawInflater
    /// Compresses the client's messages with the window the server allowed; `nil` when it allowed
    /// only 8 bits, which zlib cannot compress raw DEFLATE with: messages then go uncompressed,
    /// which RFC 7692 §6 allows.
    let deflater: RawDeflater?
    /// The server's answer, as ``WebSocketClient/extensions`` reports it.
    let answer: String

    /// - Throws: ``WebSocketError/connectionFailed(_:)`` when zlib cannot set up (no memory).
    init(_ parameters: DeflateParameters) throws {
        guard let inflater = RawInflater(resetsAfterEachMessage: parameters.serverNoContextTakeover) else {
            throw WebSocketError.connectionFailed("zlib could not set up a decompressor")
        }
        self.inflater = inflater
        if parameters.clientMaxWindowBits >= 9 {
            guard
                let deflater = RawDeflater(
                    windowBits: parameters.clientMaxWindowBits, resetsAfterEachMessage: parameters.clientNoContextTakeover)
            else { throw WebSocketError.connectionFailed("zlib could not set up a compressor") }
            self.deflater = deflater
        } else {
            deflater = nil
        }
        answer = parameters.answer
    }
}
