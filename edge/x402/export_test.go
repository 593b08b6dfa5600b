package x402

// SolanaTransfer builds a client-signed Solana exact-scheme transfer for
// the tests of package x402_test.
var SolanaTransfer = solanaTransfer
