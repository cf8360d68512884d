// `tsx --import ./bench/lib/register-css.mjs ...`: see css-hooks.mjs.
import { register } from "node:module";
register("./css-hooks.mjs", import.meta.url);
