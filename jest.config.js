// Root jest config: runs every project's suite in one jest process pool.
module.exports = {
  projects: ['<rootDir>/apps/*/jest.config.js', '<rootDir>/libs/*/*/jest.config.js', '<rootDir>/tools/jest.config.js'],
};
