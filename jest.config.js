// Root jest config: runs every project's suite in one jest process pool.
module.exports = {
  projects: ['<rootDir>/apps/*/jest.config.js', '<rootDir>/libs/*/*/jest.config.js', '<rootDir>/tools/jest.config.js'],
  // A global option: in projects mode jest ignores testTimeout from a project's preset. Specs
  // that start real processes (CLI, launcher, API) need more than jest's 5 s default on a busy
  // 2-core machine.
  testTimeout: 30000,
};
