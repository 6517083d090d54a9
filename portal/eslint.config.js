// The portal's lint: typescript-eslint's recommended rules and React's rules of hooks (with the React Compiler's checks
// that eslint-plugin-react-hooks 7 brings), run by the service's `npm test` (npm run portal:lint).
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'src/api/schema.d.ts'] },
  tseslint.configs.recommended,
  reactHooks.configs.flat.recommended,
  { files: ['src/**/*.{ts,tsx}'] },
);
