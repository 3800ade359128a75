// The page's stand-in for `@vercel/oidc`, which the AI SDK's gateway provider imports and which is published as
// CommonJS only (a browser cannot import it). A page talks to its own server and never calls the gateway; these are
// the two functions the gateway imports, and the token is refused rather than faked.

/** The request context of a Vercel function: none in a browser. */
export function getContext() {
  return {};
}

/** A Vercel OIDC token: none in a browser, where the gateway is never called. */
export async function getVercelOidcToken() {
  throw new Error('@vercel/oidc: no OIDC token in a browser (the page never calls the AI SDK gateway)');
}
