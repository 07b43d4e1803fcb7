/** This SDK's version, sent in `User-Agent` where the platform allows it. Kept equal to package.json's. */
export const VERSION = "0.1.0";
